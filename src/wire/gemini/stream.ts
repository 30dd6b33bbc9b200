import { GatewayError } from "../../errors.ts";
import { randomId, type StreamDecoder, type StreamEncoder } from "../codec.ts";
import { isObject, stringOr, type Json } from "../../lib/read.ts";
import { usageTracker } from "../usage.ts";
import type { Finish, SseEvent, StreamEvent } from "../../ir.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";
import { errorBody } from "./errors.ts";
import { fromFinishReason, toFinishReason } from "./finish-reason.ts";
import { callOf } from "./parts.ts";
import { carriedSignature, recalledSignature, rememberSignature, signatureEvent } from "./signatures.ts";
import { fromGemini, toGemini } from "./usage.ts";

/**
 * Gemini's stream (`streamGenerateContent?alt=sse`): each event is a whole `GenerateContentResponse`
 * holding the next parts; a function call comes whole, in one part; the last event has the
 * `finishReason`, and usage comes with every event, counted so far.
 */

export function streamDecoder(up: Upstream): StreamDecoder<unknown> {
  let started = false;
  let calls = 0;
  return (chunk) => {
    const bad = (what: string) => badShape(up, what, JSON.stringify(chunk));
    if (!isObject(chunk)) throw bad("a stream chunk that is not an object");
    if (isObject(chunk.error)) {
      throw new GatewayError(503, "service_unavailable_error", `${up.label} failed in the middle of its reply.`, { upstream: String(chunk.error.message ?? "") });
    }
    const events: StreamEvent[] = [];
    if (!started) {
      started = true;
      events.push({ type: "start", id: stringOr(chunk.responseId) });
    }
    const candidates = chunk.candidates ?? [];
    if (!Array.isArray(candidates)) throw bad("candidates is not a list");
    const candidate = candidates[0];
    if (candidate !== undefined && !isObject(candidate)) throw bad("a candidate that is not an object");
    const parts = candidate && isObject(candidate.content) ? (candidate.content.parts ?? []) : [];
    if (!Array.isArray(parts)) throw bad("content.parts is not a list");
    for (const part of parts) {
      if (!isObject(part)) throw bad("a part that is not an object");
      const signature = stringOr(part.thoughtSignature);
      if (signature) events.push(signatureEvent(signature));
      if (isObject(part.functionCall)) {
        const call = callOf(part.functionCall, bad);
        if (signature) rememberSignature(call.id, signature);
        const index = calls++;
        events.push({ type: "tool_call", index, id: call.id, name: call.name }, { type: "tool_args", index, text: call.arguments });
      } else if (typeof part.text === "string" && part.text) {
        events.push(part.thought === true ? { type: "reasoning", text: part.text } : { type: "text", text: part.text });
      }
    }
    const usage = fromGemini(chunk.usageMetadata);
    if (usage) events.push({ type: "usage", usage });
    const reason = candidate ? stringOr(candidate.finishReason) : undefined;
    const blocked = !candidate && isObject(chunk.promptFeedback) ? stringOr(chunk.promptFeedback.blockReason) : undefined;
    if (reason) events.push({ type: "finish", finish: fromFinishReason(reason, calls > 0) });
    else if (blocked) events.push({ type: "finish", finish: { reason: "content_filter", raw: blocked } });
    return events;
  };
}

/**
 * IR events as Gemini writes them for a client: a chunk per text or thought delta, function calls
 * whole (their arguments gathered first), and the finish reason with the usage in the last chunk
 * (sent at the end, since usage may come after the finish).
 */
export function streamEncoder(model: string): StreamEncoder {
  const responseId = randomId("");
  const usage = usageTracker();
  const calls: Call[] = [];
  const byIndex = new Map<number, Call>();
  let pending: string | undefined;
  let finish: Finish | undefined;
  const chunk = (parts: Json[], last?: Json): SseEvent => ({
    data: { candidates: [{ content: { role: "model", parts }, ...last, index: 0 }], ...(last ? { usageMetadata: toGemini(usage.reported) } : {}), modelVersion: model, responseId },
  });
  const signed = (part: Json): Json => {
    if (pending === undefined) return part;
    const signature = pending;
    pending = undefined;
    return { ...part, thoughtSignature: signature };
  };
  /** Calls are written once their arguments are all in: when anything else comes. */
  const flushCalls = (): SseEvent[] => {
    if (!calls.length) return [];
    const parts = calls.map((c) => ({ functionCall: { id: c.id, name: c.name, args: parseArgs(c.args) }, ...(c.signature ? { thoughtSignature: c.signature } : {}) }));
    calls.length = 0;
    byIndex.clear();
    return [chunk(parts)];
  };

  return {
    event(event) {
      switch (event.type) {
        case "start":
          usage.add(event.usage);
          return [];
        case "text":
          return event.text ? [...flushCalls(), chunk([signed({ text: event.text })])] : [];
        case "reasoning": {
          const carried = carriedSignature({ type: "reasoning", text: event.text, ...(event.signature ? { signature: event.signature } : {}) });
          if (carried !== undefined) {
            pending = carried;
            return [];
          }
          return event.text ? [...flushCalls(), chunk([signed({ text: event.text, thought: true })])] : [];
        }
        case "tool_call": {
          const signature = pending ?? recalledSignature(event.id);
          pending = undefined;
          const call: Call = { id: event.id, name: event.name, args: "", ...(signature ? { signature } : {}) };
          calls.push(call);
          byIndex.set(event.index, call);
          return [];
        }
        case "tool_args": {
          const call = byIndex.get(event.index);
          if (call) call.args += event.text;
          return [];
        }
        case "finish":
          finish = event.finish;
          return flushCalls();
        case "usage":
          usage.add(event.usage);
          return [];
      }
    },
    error: (error) => [{ data: errorBody(error) }],
    end() {
      const last = { finishReason: toFinishReason(finish ?? { reason: "stop", raw: "" }) };
      const parts = pending !== undefined ? [{ text: "", thoughtSignature: pending }] : [];
      pending = undefined;
      return [...flushCalls(), chunk(parts, last)];
    },
  };
}

interface Call {
  id: string;
  name: string;
  args: string;
  signature?: string;
}

function parseArgs(text: string): Json {
  try {
    const value = JSON.parse(text || "{}");
    return isObject(value) ? value : {};
  } catch {
    return {};
  }
}
