import { invalidRequest } from "../../errors.ts";
import { parseArguments, type Json } from "../../lib/read.ts";
import { alternating, systemOnTop, type ChatRequest, type Part, type ToolChoice } from "../../ir.ts";
import { refuseUnsupported } from "../cross-family.ts";
import { isSignaturePart } from "../gemini/signatures.ts";
import { addBreakpoints } from "./cache-breakpoints.ts";

/** The IR as an Anthropic Messages body, for Anthropic's API and Claude on Bedrock alike (each adds its framing). */

const DEFAULT_MAX_TOKENS = 4096;

/** The name of the tool that carries a `response_format` answer: Claude has no JSON mode, so the answer is a forced tool call. */
export const FORMAT_TOOL = "json_response";

/** `target` names the upstream in a refusal; `remoteImages`: it fetches image URLs itself (Anthropic's API does, Bedrock does not). */
export function encodeRequest(request: ChatRequest, target: string, remoteImages = false): Json {
  refuseUnsupported(request, target);
  // tool_choice none keeps the tools: a history holding tool_use blocks needs their definitions.
  const format = formatTool(request);
  const tools = [...(request.tools ?? []).map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })), ...(format ? [format] : [])];
  const choice = format ? formatChoice(request) : request.toolChoice ? encodeToolChoice(request.toolChoice) : request.parallelToolCalls === false ? { type: "auto" } : undefined;
  // Only the newest Claude models take system messages in the conversation: every model takes them on top.
  const { system, messages } = systemOnTop(request);
  const block = (part: Part) => encodeBlock(part, target, remoteImages);
  const body: Json = {
    max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
    ...(system.length ? { system: request.systemCache ? systemBlocks(system, request.systemCache) : system.join("\n\n") } : {}),
    messages: alternating(messages).map((m) => ({ role: m.role, content: m.content.filter((p) => !isSignaturePart(p)).map(block) })),
    ...(request.temperature !== undefined ? { temperature: Math.min(request.temperature, 1) } : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
    ...(request.topK !== undefined ? { top_k: request.topK } : {}),
    ...(request.stop?.length ? { stop_sequences: request.stop } : {}),
    ...(tools.length ? { tools } : {}),
    ...(tools.length && choice ? { tool_choice: request.parallelToolCalls === false ? { ...choice, disable_parallel_tool_use: true } : choice } : {}),
  };
  addBreakpoints(body, request);
  return body;
}

/** System texts as blocks, each ending where the client marked one to cache (the `cache_control` it sent). */
function systemBlocks(system: string[], marks: NonNullable<ChatRequest["systemCache"]>): Json[] {
  return system.map((text, i) => (marks[i] ? { type: "text", text, cache_control: marks[i] } : { type: "text", text }));
}

/** With a response format, the model answers through the format tool, or first calls one of the client's tools. */
function formatChoice(request: ChatRequest): Json {
  const choice = request.toolChoice;
  if (choice?.type === "tool") return { type: "tool", name: choice.name };
  if (request.tools?.length && choice?.type !== "none") return { type: "any" };
  return { type: "tool", name: FORMAT_TOOL };
}

function formatTool(request: ChatRequest): Json | undefined {
  const format = request.responseFormat;
  if (!format) return undefined;
  if (format.type === "json_object") return { name: FORMAT_TOOL, description: "Answer with a JSON object.", input_schema: { type: "object" } };
  const description = `Answer in the JSON format '${format.name}'${format.description ? `: ${format.description}` : "."}`;
  return { name: FORMAT_TOOL, description, input_schema: format.schema };
}

function encodeBlock(part: Part, target: string, remoteImages: boolean): Json {
  switch (part.type) {
    case "text":
      return part.cache ? { type: "text", text: part.text, cache_control: part.cache } : { type: "text", text: part.text };
    case "image":
      return { type: "image", source: { type: "base64", media_type: part.mediaType, data: part.data } };
    case "image_url":
      if (remoteImages) return { type: "image", source: { type: "url", url: part.url } };
      throw invalidRequest(`Remote image URLs cannot be sent to ${target}: send the image inline as a base64 data URL.`);
    case "document":
      return { type: "document", source: { type: "base64", media_type: part.mediaType, data: part.data }, ...(part.title ? { title: part.title } : {}) };
    case "tool_call":
      return { type: "tool_use", id: part.id, name: part.name, input: parseArguments(part.arguments, `tool call ${part.id}`) };
    case "tool_result":
      return { type: "tool_result", tool_use_id: part.toolCallId, content: part.content, ...(part.isError ? { is_error: true } : {}), ...(part.cache ? { cache_control: part.cache } : {}) };
    case "reasoning":
      return part.redacted ? { type: "redacted_thinking", data: part.redacted } : { type: "thinking", thinking: part.text, signature: part.signature ?? "" };
  }
}

export function encodeToolChoice(choice: ToolChoice): Json {
  switch (choice.type) {
    case "required":
      return { type: "any" };
    case "tool":
      return { type: "tool", name: choice.name };
    default:
      return { type: choice.type };
  }
}
