import { GatewayError, invalidRequest } from "../../errors.ts";
import { finishFrom, type StreamDecoder } from "../../formats/codec.ts";
import { isObject, numberOr, parseArguments, stringOr, type Json } from "../../formats/read.ts";
import { fromAnthropic } from "../../formats/usage.ts";
import { alternating, systemOnTop, type ChatReply, type ChatRequest, type Finish, type FinishReason, type Part, type StreamEvent, type ToolChoice, type Usage } from "../../ir.ts";
import { refuseUnsupported } from "../cross-family.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";

/** The Bedrock InvokeModel body for `anthropic.*` models (Anthropic Messages), and its answers -> IR. */

const BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31";
const DEFAULT_MAX_TOKENS = 4096;

const STOP_REASONS: Record<string, FinishReason> = {
  end_turn: "stop",
  pause_turn: "stop",
  stop_sequence: "stop_sequence",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
  guardrail_intervened: "content_filter",
  content_filtered: "content_filter",
};

export function fromStopReason(raw: string | null | undefined, stopSequence?: string | null): Finish {
  return { ...finishFrom(STOP_REASONS, raw), ...(stopSequence ? { stopSequence } : {}) };
}

/** The name of the tool that carries a `response_format` answer: Claude has no JSON mode, so the answer is a forced tool call. */
export const FORMAT_TOOL = "json_response";

export function encodeRequest(request: ChatRequest): Json {
  refuseUnsupported(request, "AWS Bedrock");
  // tool_choice none keeps the tools: a history holding tool_use blocks needs their definitions.
  const format = formatTool(request);
  const tools = [...(request.tools ?? []).map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })), ...(format ? [format] : [])];
  const choice = format ? formatChoice(request) : request.toolChoice ? encodeToolChoice(request.toolChoice) : request.parallelToolCalls === false ? { type: "auto" } : undefined;
  // Only the newest Claude models take system messages in the conversation: every model takes them on top.
  const { system, messages } = systemOnTop(request);
  return {
    anthropic_version: BEDROCK_ANTHROPIC_VERSION,
    max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
    ...(system.length ? { system: system.join("\n\n") } : {}),
    messages: alternating(messages).map((m) => ({ role: m.role, content: m.content.map(encodeBlock) })),
    ...(request.temperature !== undefined ? { temperature: Math.min(request.temperature, 1) } : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
    ...(request.topK !== undefined ? { top_k: request.topK } : {}),
    ...(request.stop?.length ? { stop_sequences: request.stop } : {}),
    ...(tools.length ? { tools } : {}),
    ...(tools.length && choice ? { tool_choice: request.parallelToolCalls === false ? { ...choice, disable_parallel_tool_use: true } : choice } : {}),
  };
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

function encodeBlock(part: Part): Json {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "image":
      return { type: "image", source: { type: "base64", media_type: part.mediaType, data: part.data } };
    case "image_url":
      throw invalidRequest("Remote image URLs cannot be sent to Bedrock: send the image inline as a base64 data URL.");
    case "document":
      return { type: "document", source: { type: "base64", media_type: part.mediaType, data: part.data }, ...(part.title ? { title: part.title } : {}) };
    case "tool_call":
      return { type: "tool_use", id: part.id, name: part.name, input: parseArguments(part.arguments, `tool call ${part.id}`) };
    case "tool_result":
      return { type: "tool_result", tool_use_id: part.toolCallId, content: part.content, ...(part.isError ? { is_error: true } : {}) };
    case "reasoning":
      return part.redacted ? { type: "redacted_thinking", data: part.redacted } : { type: "thinking", thinking: part.text, signature: part.signature ?? "" };
  }
}

function encodeToolChoice(choice: ToolChoice): Json {
  switch (choice.type) {
    case "required":
      return { type: "any" };
    case "tool":
      return { type: "tool", name: choice.name };
    default:
      return { type: choice.type };
  }
}

/**
 * A whole reply -> IR; a reply that is not a message, or a block missing what it needs, is the
 * upstream failing. A `response_format` answer (the forced tool's input) becomes the message text.
 */
export function decodeReply(body: unknown, up: Upstream, request?: ChatRequest): ChatReply {
  const bad = (what: string) => badShape(up, what, JSON.stringify(body));
  if (!isObject(body) || !Array.isArray(body.content)) throw bad("no content list in the message");
  const formatted = !!request?.responseFormat;
  let answered = false;
  const content = body.content.flatMap((block): Part[] => {
    if (!isObject(block)) throw bad("a content block that is not an object");
    switch (block.type) {
      case "text":
        if (typeof block.text !== "string") throw bad("a text block without text");
        return [{ type: "text", text: block.text }];
      case "tool_use":
        if (typeof block.id !== "string" || typeof block.name !== "string" || !block.name) throw bad("a tool_use block without an id or a name");
        if (formatted && block.name === FORMAT_TOOL) {
          answered = true;
          return [{ type: "text", text: JSON.stringify(block.input ?? {}) }];
        }
        return [{ type: "tool_call", id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) }];
      case "thinking":
        return [{ type: "reasoning", text: stringOr(block.thinking) ?? "", ...(typeof block.signature === "string" ? { signature: block.signature } : {}) }];
      case "redacted_thinking":
        return [{ type: "reasoning", text: "", redacted: stringOr(block.data) ?? "" }];
      default:
        return [];
    }
  });
  const finish = fromStopReason(stringOr(body.stop_reason), stringOr(body.stop_sequence));
  return {
    id: typeof body.id === "string" ? body.id : undefined,
    content,
    // The format tool's call is the answer, not a call the client must run.
    finish: answered && finish.reason === "tool_calls" && !content.some((p) => p.type === "tool_call") ? { reason: "stop", raw: finish.raw } : finish,
    usage: isObject(body.usage) ? fromAnthropic(body.usage) : undefined,
  };
}

/**
 * A message passed through to an Anthropic client: the checks of `decodeReply` (the same replies
 * are refused with a 503), without building the IR. Returns the token counts.
 */
export function checkMessage(body: unknown, up: Upstream): Usage | undefined {
  const bad = (what: string) => badShape(up, what, JSON.stringify(body));
  if (!isObject(body) || !Array.isArray(body.content)) throw bad("no content list in the message");
  for (const block of body.content) {
    if (!isObject(block)) throw bad("a content block that is not an object");
    if (block.type === "text" && typeof block.text !== "string") throw bad("a text block without text");
    if (block.type === "tool_use" && (typeof block.id !== "string" || typeof block.name !== "string" || !block.name)) throw bad("a tool_use block without an id or a name");
  }
  return isObject(body.usage) ? fromAnthropic(body.usage) : undefined;
}


/** Anthropic stream events (as Bedrock wraps them in chunks) -> IR events. */
export function streamDecoder(up: Upstream, request?: ChatRequest): StreamDecoder<unknown> {
  const tools = new Map<unknown, number>();
  const formatted = !!request?.responseFormat;
  let answerBlock: unknown;
  return (event): StreamEvent[] => {
    if (!isObject(event)) throw badShape(up, "a stream event that is not an object", JSON.stringify(event));
    switch (event.type) {
      case "message_start": {
        const message = isObject(event.message) ? event.message : {};
        // The input, with the cache, is counted here; message_start's output count is not the answer's.
        return [{ type: "start", id: stringOr(message.id), ...(isObject(message.usage) ? { usage: { input: fromAnthropic(message.usage).input } } : {}) }];
      }
      case "content_block_start": {
        const block = isObject(event.content_block) ? event.content_block : {};
        if (block.type === "tool_use") {
          if (typeof block.name !== "string" || !block.name) throw badShape(up, "a streamed tool_use block without a name", JSON.stringify(event));
          if (formatted && block.name === FORMAT_TOOL) {
            answerBlock = event.index;
            return [];
          }
          const index = tools.size;
          tools.set(event.index, index);
          return [{ type: "tool_call", index, id: String(block.id ?? ""), name: block.name }];
        }
        if (block.type === "thinking" && typeof block.thinking === "string" && block.thinking) return [{ type: "reasoning", text: block.thinking }];
        return block.type === "text" && typeof block.text === "string" && block.text ? [{ type: "text", text: block.text }] : [];
      }
      case "content_block_delta": {
        const delta = isObject(event.delta) ? event.delta : {};
        if (delta.type === "text_delta" && typeof delta.text === "string") return [{ type: "text", text: delta.text }];
        if (delta.type === "thinking_delta" && typeof delta.thinking === "string") return [{ type: "reasoning", text: delta.thinking }];
        if (delta.type === "signature_delta" && typeof delta.signature === "string") return [{ type: "reasoning", text: "", signature: delta.signature }];
        if (delta.type !== "input_json_delta" || typeof delta.partial_json !== "string") return [];
        if (answerBlock !== undefined && event.index === answerBlock) return delta.partial_json ? [{ type: "text", text: delta.partial_json }] : [];
        const tool = tools.get(event.index);
        return tool === undefined ? [] : [{ type: "tool_args", index: tool, text: delta.partial_json }];
      }
      case "message_delta": {
        const delta = isObject(event.delta) ? event.delta : {};
        const usage = isObject(event.usage) ? event.usage : {};
        const stop = stringOr(delta.stop_reason);
        const output = numberOr(usage.output_tokens);
        const finish = stop ? fromStopReason(stop, stringOr(delta.stop_sequence)) : undefined;
        const answered = finish?.reason === "tool_calls" && answerBlock !== undefined && tools.size === 0;
        return [
          ...(finish ? [{ type: "finish" as const, finish: answered ? { reason: "stop" as const, raw: finish.raw } : finish }] : []),
          ...(output !== undefined ? [{ type: "usage" as const, usage: { output } }] : []),
        ];
      }
      case "error": {
        const error = isObject(event.error) ? event.error : {};
        throw new GatewayError(503, "service_unavailable_error", `${up.label} failed in the middle of its reply.`, { upstream: String(error.message ?? "") });
      }
      default:
        return [];
    }
  };
}
