import type { GatewayError } from "../../errors.ts";
import { randomId } from "../codec.ts";
import { isObject, parseArguments, stringOr, topMembers, type Json } from "../../lib/read.ts";
import type { ChatReply, ChatRequest, Part, SseEvent, Usage } from "../../ir.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";
import { FORMAT_TOOL } from "./encode-request.ts";
import { fromStopReason, toStopReason } from "./stop-reason.ts";
import { fromAnthropic, usageObject, type CacheTokens } from "./usage.ts";

/** A whole Anthropic message: read from an upstream into the IR, written from the IR for a client. */

/**
 * What the one encoder leaves to the endpoint: `/v1/messages` writes Anthropic's usage, thinking
 * blocks and tool callers; the spec's `beta_messages` format the input with its cache (see
 * `CacheTokens`) and no thinking.
 */
export interface EncodeOptions {
  cache: CacheTokens;
  /** False: reasoning has no place in this dialect and is left out. */
  thinking: boolean;
  /** What a tool_use block's `caller` says, in a dialect whose blocks have one. */
  caller?: Json;
  error(error: GatewayError): SseEvent[];
}

export const messageId = (id?: string) => (id?.startsWith("msg_") ? id : randomId("msg_"));

export function encodeReply(reply: ChatReply, model: string, options: EncodeOptions) {
  return {
    id: messageId(reply.id),
    type: "message",
    role: "assistant",
    model,
    content: reply.content.flatMap((part) => contentBlock(part, options)),
    stop_reason: toStopReason(reply.finish),
    stop_sequence: reply.finish.stopSequence ?? null,
    usage: usageObject(reply.usage, "reply", options.cache),
  };
}

function contentBlock(part: Part, { thinking, caller }: EncodeOptions): Json[] {
  if (part.type === "text") return part.text ? [{ type: "text", text: part.text }] : [];
  if (part.type === "tool_call") return [{ type: "tool_use", id: part.id, name: part.name, input: parseArguments(part.arguments, "the reply"), ...(caller ? { caller } : {}) }];
  if (part.type === "reasoning" && thinking) return part.redacted ? [{ type: "redacted_thinking", data: part.redacted }] : [{ type: "thinking", thinking: part.text, signature: part.signature ?? "" }];
  return [];
}

/**
 * An upstream's message -> IR; a reply that is not a message, or a block missing what it needs, is
 * the upstream failing. A `response_format` answer (the forced tool's input) becomes the message text.
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

/**
 * A body (a reply, or a client's request) naming another model; everything else byte for byte.
 * Clients and upstreams write `"model":"…"` among the first keys: that text is replaced in place,
 * else the top-level member is found by reading the body's structure (never parsed and written anew:
 * that would round big numbers and drop the client's spacing and escapes).
 */
export function renamed(text: string, reply: Record<string, unknown>, requested: string): string {
  if (reply.model === requested) return text;
  const at = text.indexOf('"model":');
  const before = at > 0 ? text.slice(0, at) : "";
  const value = JSON.stringify(reply.model);
  // Before it only the opening brace and flat keys: no nested object or list.
  if (at > 0 && typeof reply.model === "string" && before.lastIndexOf("{") === 0 && !before.includes("[") && text.startsWith(value, at + 8)) {
    return `${before}"model":${JSON.stringify(requested)}${text.slice(at + 8 + value.length)}`;
  }
  const model = topMembers(text)?.find((m) => m.key === "model");
  if (model) return `${text.slice(0, model.valueStart)}${JSON.stringify(requested)}${text.slice(model.end)}`;
  return JSON.stringify({ ...reply, model: requested });
}

/** A stream's `message_start` naming the model the client asked for, as its SSE lines (the blank line after it left to the caller). */
export function renamedStart(event: Record<string, unknown>, message: Record<string, unknown>, requested: string): string {
  return `event: message_start\ndata: ${JSON.stringify({ ...event, message: { ...message, model: requested } })}`;
}
