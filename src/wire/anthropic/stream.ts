import { GatewayError } from "../../errors.ts";
import { randomId, type StreamDecoder, type StreamEncoder } from "../codec.ts";
import { isObject, numberOr, stringOr, type Json } from "../../lib/read.ts";
import { usageTracker } from "../usage.ts";
import type { ChatRequest, Finish, SseEvent, StreamEvent } from "../../ir.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";
import type { EncodeOptions } from "./reply.ts";
import { FORMAT_TOOL } from "./encode-request.ts";
import { fromStopReason, toStopReason } from "./stop-reason.ts";
import { fromAnthropic, usageObject } from "./usage.ts";

/** Anthropic's event stream: read from an upstream into IR events, written from them for a client. */

/** Anthropic stream events (from Anthropic's SSE, or as Bedrock wraps them in chunks) -> IR events. */
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

/**
 * Anthropic's event grammar, for the native Messages codec and beta_messages alike: message_start,
 * blocks opened and closed in order from 0, message_delta, message_stop.
 */
export function streamEncoder(model: string, dialect: EncodeOptions): StreamEncoder {
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
    const message = { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: usageObject(usage, "start", dialect.cache) };
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
        sse("message_delta", { delta: { stop_reason: toStopReason(stop), stop_sequence: stop.stopSequence ?? null }, usage: usageObject(usage, "end", dialect.cache) }),
        sse("message_stop", {}),
      ];
    },
  };
}
