import type { GatewayError } from "../errors.ts";
import type { ChatReply, Finish, Part, SseEvent, Usage } from "../ir.ts";
import { randomId, type StreamEncoder } from "./codec.ts";
import { parseArguments, type Json } from "./read.ts";
import { usageTracker } from "./usage.ts";

/**
 * A reply in Anthropic's message shape, whole or as its event stream, for the native Messages codec
 * and beta_messages alike. Each dialect fills in what the shape leaves to it.
 */
export interface AnthropicDialect {
  /** The usage object of a whole reply, of message_start and of message_delta. */
  usage(usage: Partial<Usage> | undefined, at: "reply" | "start" | "end"): Json;
  /** False: reasoning has no place in this dialect and is left out. */
  thinking: boolean;
  /** What a tool_use block's `caller` says, in a dialect whose blocks have one. */
  caller?: Json;
  error(error: GatewayError): SseEvent[];
}

export const messageId = (id?: string) => (id?.startsWith("msg_") ? id : randomId("msg_"));

export function anthropicReply(reply: ChatReply, model: string, dialect: AnthropicDialect) {
  return {
    id: messageId(reply.id),
    type: "message",
    role: "assistant",
    model,
    content: reply.content.flatMap((part) => contentBlock(part, dialect)),
    stop_reason: toStopReason(reply.finish),
    stop_sequence: reply.finish.stopSequence ?? null,
    usage: dialect.usage(reply.usage, "reply"),
  };
}

function contentBlock(part: Part, { thinking, caller }: AnthropicDialect): Json[] {
  if (part.type === "text") return part.text ? [{ type: "text", text: part.text }] : [];
  if (part.type === "tool_call") return [{ type: "tool_use", id: part.id, name: part.name, input: parseArguments(part.arguments, "the reply"), ...(caller ? { caller } : {}) }];
  if (part.type === "reasoning" && thinking) return part.redacted ? [{ type: "redacted_thinking", data: part.redacted }] : [{ type: "thinking", thinking: part.text, signature: part.signature ?? "" }];
  return [];
}

/**
 * Anthropic's event grammar, for the native Messages codec and beta_messages alike: message_start,
 * blocks opened and closed in order from 0, message_delta, message_stop.
 */
export function anthropicStream(model: string, dialect: AnthropicDialect): StreamEncoder {
  const id = randomId("msg_");
  let started = false;
  let nextBlock = 0;
  let open: { kind: "text" | "thinking" | "tool"; index: number } | undefined;
  const toolBlocks = new Map<number, number>();
  let finish: Finish | undefined;
  const { reported: usage, add: count } = usageTracker();

  const sse = (event: string, data: Json): SseEvent => ({ event, data: { type: event, ...data } });
  const start = (): SseEvent[] => {
    if (started) return [];
    started = true;
    const message = { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: dialect.usage(usage, "start") };
    return [sse("message_start", { message })];
  };
  const close = (): SseEvent[] => {
    if (!open) return [];
    const index = open.index;
    open = undefined;
    return [sse("content_block_stop", { index })];
  };
  const openBlock = (kind: "text" | "thinking" | "tool", block: Json): SseEvent[] => {
    const events = close();
    open = { kind, index: nextBlock++ };
    return [...events, sse("content_block_start", { index: open.index, content_block: block })];
  };
  const delta = (delta: Json) => sse("content_block_delta", { index: open!.index, delta });

  return {
    event(event) {
      switch (event.type) {
        case "start":
          count(event.usage);
          return start();
        case "text": {
          const head = [...start(), ...(open?.kind === "text" ? [] : openBlock("text", { type: "text", text: "" }))];
          return [...head, delta({ type: "text_delta", text: event.text })];
        }
        case "reasoning": {
          if (!dialect.thinking) return [];
          const head = [...start(), ...(open?.kind === "thinking" ? [] : openBlock("thinking", { type: "thinking", thinking: "", signature: "" }))];
          return [
            ...head,
            ...(event.text ? [delta({ type: "thinking_delta", thinking: event.text })] : []),
            ...(event.signature ? [delta({ type: "signature_delta", signature: event.signature })] : []),
          ];
        }
        case "tool_call": {
          const head = [...start(), ...openBlock("tool", { type: "tool_use", id: event.id, name: event.name, input: {}, ...(dialect.caller ? { caller: dialect.caller } : {}) })];
          toolBlocks.set(event.index, open!.index);
          return head;
        }
        case "tool_args": {
          const index = toolBlocks.get(event.index);
          if (index === undefined) return [];
          return [sse("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: event.text } })];
        }
        case "finish":
          finish = event.finish;
          return [...start(), ...close()];
        case "usage":
          count(event.usage);
          return [];
      }
    },
    error: dialect.error,
    end() {
      const stop = finish ?? { reason: "stop", raw: "" };
      return [
        ...start(),
        ...close(),
        sse("message_delta", { delta: { stop_reason: toStopReason(stop), stop_sequence: stop.stopSequence ?? null }, usage: dialect.usage(usage, "end") }),
        sse("message_stop", {}),
      ];
    },
  };
}

export function toStopReason(finish: Finish): string {
  switch (finish.reason) {
    case "stop":
    case "other":
      return "end_turn";
    case "stop_sequence":
      return "stop_sequence";
    case "length":
      return "max_tokens";
    case "tool_calls":
      return "tool_use";
    case "content_filter":
      return "refusal";
  }
}
