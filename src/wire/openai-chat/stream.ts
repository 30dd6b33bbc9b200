import { randomId, type StreamDecoder, type StreamEncoder } from "../codec.ts";
import { isObject, stringOr, type Json } from "../../lib/read.ts";
import { answeredBy, usageTracker } from "../usage.ts";
import type { ChatRequest, SseEvent, StreamEvent } from "../../ir.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";
import { fromFinishReason, toFinishReason } from "./finish-reason.ts";
import { decodeUsage, now, textOf, toolCallId } from "./reply.ts";
import { toOpenAIChat } from "./usage.ts";

/** Chat Completions' stream: chunks from an upstream into IR events, IR events into chunks for a client. */

/** One stream chunk -> IR events; a chunk of the wrong shape is the upstream failing. */
export function streamDecoder(up: Upstream): StreamDecoder<unknown> {
  let started = false;
  const named = new Set<number>();
  return (chunk) => {
    const bad = (what: string) => badShape(up, what, JSON.stringify(chunk));
    if (!isObject(chunk)) throw bad("a stream chunk that is not an object");
    const events: StreamEvent[] = [];
    if (!started) {
      started = true;
      events.push({ type: "start", id: typeof chunk.id === "string" ? chunk.id : undefined });
    }
    const choices = chunk.choices ?? [];
    if (!Array.isArray(choices)) throw bad("choices is not a list");
    const choice = choices[0];
    if (choice !== undefined) {
      if (!isObject(choice)) throw bad("choices[0] is not an object");
      const delta = choice.delta ?? {};
      if (!isObject(delta)) throw bad("choices[0].delta is not an object");
      const text = textOf(delta.content);
      if (text === undefined) throw bad("delta.content is neither text nor null");
      // Some OpenAI-compatible servers (DeepSeek, vLLM) stream the model's reasoning beside the answer.
      const reasoning = stringOr(delta.reasoning_content) ?? stringOr(delta.reasoning);
      if (reasoning) events.push({ type: "reasoning", text: reasoning });
      if (text) events.push({ type: "text", text });
      const calls = delta.tool_calls ?? [];
      if (!Array.isArray(calls)) throw bad("delta.tool_calls is not a list");
      for (const call of calls) events.push(...toolCallDelta(call, named, bad));
      const finish = stringOr(choice.finish_reason);
      if (finish) events.push({ type: "finish", finish: fromFinishReason(finish) });
    }
    const usage = answeredBy(decodeUsage(chunk.usage), chunk.model);
    if (usage) events.push({ type: "usage", usage });
    return events;
  };
}

/** A tool call arrives in fragments: the first names it, the rest carry argument text. */
function toolCallDelta(call: unknown, named: Set<number>, bad: (what: string) => Error): StreamEvent[] {
  if (!isObject(call)) throw bad("a tool call fragment that is not an object");
  const index = typeof call.index === "number" ? call.index : 0;
  const fn = isObject(call.function) ? call.function : {};
  const events: StreamEvent[] = [];
  if (!named.has(index)) {
    if (typeof fn.name !== "string" || !fn.name) throw bad("a streamed tool call without a name");
    named.add(index);
    events.push({ type: "tool_call", index, id: toolCallId(call.id), name: fn.name });
  }
  if (typeof fn.arguments === "string" && fn.arguments) events.push({ type: "tool_args", index, text: fn.arguments });
  return events;
}

export function streamEncoder(model: string, request: ChatRequest): StreamEncoder {
  const id = randomId("chatcmpl-");
  const created = now();
  let started = false;
  const usage = usageTracker();
  const chunk = (delta: Json, finish: string | null = null): SseEvent => ({
    data: { id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] },
  });
  const open = (): SseEvent[] => (started ? [] : ((started = true), [chunk({ role: "assistant", content: "" })]));

  return {
    event(event) {
      switch (event.type) {
        case "start":
          usage.add(event.usage);
          return open();
        case "text":
          return [...open(), chunk({ content: event.text })];
        case "tool_call":
          return [...open(), chunk({ tool_calls: [{ index: event.index, id: event.id, type: "function", function: { name: event.name, arguments: "" } }] })];
        case "tool_args":
          return [...open(), chunk({ tool_calls: [{ index: event.index, function: { arguments: event.text } }] })];
        case "finish":
          return [...open(), chunk({}, toFinishReason(event.finish))];
        case "usage":
          usage.add(event.usage);
          return [];
        case "reasoning":
          // This format has no place for reasoning text.
          return [];
      }
    },
    error: (error) => [{ data: { error: { type: error.type, message: error.message } } }],
    end() {
      const counts = request.includeUsage ? usage.usage() : undefined;
      const tail: SseEvent[] = counts ? [{ data: { id, object: "chat.completion.chunk", created, model, choices: [], usage: toOpenAIChat(counts) } }] : [];
      return [...open(), ...tail, { data: "[DONE]" }];
    },
  };
}
