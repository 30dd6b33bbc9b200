import { invalidRequest } from "../../errors.ts";
import type { StreamDecoder } from "../codec.ts";
import { isObject, parseArguments, stringOr, type Json } from "../../lib/read.ts";
import { alternating, systemOnTop, type ChatReply, type ChatRequest, type Part, type StreamEvent, type Turn } from "../../ir.ts";
import { refuseUnsupported } from "../cross-family.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";
import { fromStopReason } from "../anthropic/stop-reason.ts";
import { fromConverse } from "./client.ts";

/** The Bedrock Converse API: used for every Bedrock family without a native body here. */

/** The request body; the model id goes in the path. */
export function encodeConverse(request: ChatRequest): Json {
  refuseUnsupported(request, "This Bedrock model (Converse API)");
  if (request.responseFormat) throw invalidRequest("response_format is not supported for this Bedrock model: use a Claude or an OpenAI model for JSON output.", "response_format: unsupported by the model");
  // Converse has no "none" choice: without tools the model cannot call one, and the history's
  // tool blocks (which Converse refuses without a toolConfig) are told as text instead.
  const none = request.toolChoice?.type === "none";
  const tools = none ? undefined : request.tools;
  const { system, messages: turns } = systemOnTop(request);
  const messages = none ? turns.map(toolsAsText) : turns;
  return {
    // Reasoning from another model cannot be sent back to this one; it only informed that model's answer.
    // Converse refuses two turns of one role in a row.
    messages: alternating(messages).map((m) => ({ role: m.role, content: m.content.filter((p) => p.type !== "reasoning").map(encodePart) })),
    ...(system.length ? { system: system.map((text) => ({ text })) } : {}),
    inferenceConfig: {
      ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
      ...(request.temperature !== undefined ? { temperature: Math.min(request.temperature, 1) } : {}),
      ...(request.topP !== undefined ? { topP: request.topP } : {}),
      ...(request.stop?.length ? { stopSequences: request.stop } : {}),
    },
    ...(tools?.length
      ? {
          toolConfig: {
            tools: tools.map((t) => ({ toolSpec: { name: t.name, description: t.description, inputSchema: { json: t.parameters } } })),
            ...(request.toolChoice?.type === "required" ? { toolChoice: { any: {} } } : {}),
            ...(request.toolChoice?.type === "tool" ? { toolChoice: { tool: { name: request.toolChoice.name } } } : {}),
          },
        }
      : {}),
  };
}

function toolsAsText(message: Turn): Turn {
  if (!message.content.some((p) => p.type === "tool_call" || p.type === "tool_result")) return message;
  const content = message.content.map((p): Part => {
    if (p.type === "tool_call") return { type: "text", text: `[called tool ${p.name} with ${p.arguments || "{}"}]` };
    if (p.type === "tool_result") return { type: "text", text: `[tool result${p.isError ? " (error)" : ""}: ${p.content}]` };
    return p;
  });
  return { role: message.role, content };
}

function encodePart(part: Part): Json {
  switch (part.type) {
    case "text":
      return { text: part.text };
    case "image":
      return { image: { format: part.mediaType.replace(/^image\//, "").replace("jpg", "jpeg"), source: { bytes: part.data } } };
    case "image_url":
      throw invalidRequest("Remote image URLs cannot be sent to Bedrock: send the image inline as a base64 data URL.");
    case "document":
      return { document: { format: part.mediaType.replace(/^application\//, ""), name: documentName(part.title), source: { bytes: part.data } } };
    case "reasoning":
      return { text: "" };
    case "tool_call":
      return { toolUse: { toolUseId: part.id, name: part.name, input: parseArguments(part.arguments, `tool call ${part.id}`) } };
    case "tool_result":
      return { toolResult: { toolUseId: part.toolCallId, content: [{ text: part.content }], ...(part.isError ? { status: "error" } : {}) } };
  }
}

/** Converse wants a document name of letters, digits, spaces, hyphens, parentheses and brackets. */
const documentName = (title?: string) => (title ?? "document").replace(/[^A-Za-z0-9 ()[\]-]/g, " ").trim().slice(0, 200) || "document";

/** A whole reply -> IR; no `output.message.content` list is the upstream failing. */
export function decodeConverse(out: unknown, up: Upstream): ChatReply {
  const bad = (what: string) => badShape(up, what, JSON.stringify(out));
  const message = isObject(out) && isObject(out.output) ? out.output.message : undefined;
  if (!isObject(out) || !isObject(message) || !Array.isArray(message.content)) throw bad("no output.message.content list");
  const content = message.content.flatMap((block): Part[] => {
    if (!isObject(block)) throw bad("a content block that is not an object");
    if (typeof block.text === "string") return [{ type: "text", text: block.text }];
    if (isObject(block.toolUse)) {
      const { toolUseId, name, input } = block.toolUse;
      if (typeof name !== "string" || !name) throw bad("a toolUse block without a name");
      return [{ type: "tool_call", id: stringOr(toolUseId) ?? "", name, arguments: JSON.stringify(input ?? {}) }];
    }
    return [];
  });
  const usage = isObject(out.usage) ? out.usage : undefined;
  return {
    content,
    finish: fromStopReason(stringOr(out.stopReason)),
    usage: usage ? fromConverse(usage) : undefined,
  };
}

/** Converse stream events, `{ eventName: payload }` -> IR events. */
export function converseStreamDecoder(up: Upstream): StreamDecoder<Json> {
  const tools = new Map<unknown, number>();
  return (event): StreamEvent[] => {
    if (event.messageStart) return [{ type: "start" }];
    const start = isObject(event.contentBlockStart) ? event.contentBlockStart : undefined;
    const toolUse = start && isObject(start.start) && isObject(start.start.toolUse) ? start.start.toolUse : undefined;
    if (start && toolUse) {
      if (typeof toolUse.name !== "string" || !toolUse.name) throw badShape(up, "a streamed toolUse block without a name", JSON.stringify(event));
      const index = tools.size;
      tools.set(start.contentBlockIndex ?? index, index);
      return [{ type: "tool_call", index, id: stringOr(toolUse.toolUseId) ?? "", name: toolUse.name }];
    }
    const blockDelta = isObject(event.contentBlockDelta) ? event.contentBlockDelta : undefined;
    const delta = blockDelta && isObject(blockDelta.delta) ? blockDelta.delta : undefined;
    if (delta && typeof delta.text === "string") return delta.text ? [{ type: "text", text: delta.text }] : [];
    if (delta && isObject(delta.toolUse) && typeof delta.toolUse.input === "string") {
      const index = tools.get(blockDelta!.contentBlockIndex ?? 0);
      return index === undefined ? [] : [{ type: "tool_args", index, text: delta.toolUse.input }];
    }
    if (isObject(event.messageStop)) return [{ type: "finish", finish: fromStopReason(stringOr(event.messageStop.stopReason)) }];
    const usage = isObject(event.metadata) && isObject(event.metadata.usage) ? event.metadata.usage : undefined;
    if (usage) return [{ type: "usage", usage: fromConverse(usage) }];
    return [];
  };
}

