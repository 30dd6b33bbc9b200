import type { GatewayError } from "../../errors.ts";
import { randomId, type StreamEncoder } from "../codec.ts";
import type { Json } from "../../lib/read.ts";
import { usageTracker } from "../usage.ts";
import type { Finish, SseEvent } from "../../ir.ts";
import { callItem, INCOMPLETE, messageItem, now, responseObject, type Status } from "./reply.ts";
import { reasoningItem } from "./sealed.ts";

/** What a failed stream's response says: OpenAI's error codes where one fits. */
export const errorCode = (error: GatewayError) => (error.status === 429 ? "rate_limit_exceeded" : error.status < 500 ? "invalid_prompt" : "server_error");

/**
 * The Responses event grammar: response.created and .in_progress, then per output item
 * output_item.added, its content (a message's text part, a call's argument deltas) and
 * output_item.done, then response.completed (or .incomplete) with the whole response and usage.
 * Items are sent one after the other; every event carries the next `sequence_number`.
 */
export function streamEncoder(model: string): StreamEncoder {
  const id = randomId("resp_");
  const createdAt = now();
  let sequence = 0;
  let started = false;
  let finish: Finish | undefined;
  const usage = usageTracker();
  /** Finished items, and the one being written, in output order. */
  const output: Json[] = [];
  let open: { item: Json; index: number; text: string } | undefined;
  const calls = new Map<number, { item: Json; index: number }>();
  let thinking = "";

  const ev = (type: string, fields: Json): SseEvent => ({ event: type, data: { type, sequence_number: sequence++, ...fields } });
  const response = (status: Status, extra: Parameters<typeof responseObject>[5] = {}) =>
    responseObject(id, createdAt, model, status, status === "in_progress" ? [] : output, extra);
  const start = (): SseEvent[] => {
    if (started) return [];
    started = true;
    return [ev("response.created", { response: response("in_progress") }), ev("response.in_progress", { response: response("in_progress") })];
  };

  const close = (status = "completed"): SseEvent[] => {
    if (!open) return [];
    const { item, index, text } = open;
    open = undefined;
    const base = { item_id: item.id, output_index: index };
    if (item.type === "message") {
      const part = { type: "output_text", text, annotations: [], logprobs: [] };
      output[index] = messageItem(item.id as string, text, status);
      return [
        ev("response.output_text.done", { ...base, content_index: 0, text, logprobs: [] }),
        ev("response.content_part.done", { ...base, content_index: 0, part }),
        ev("response.output_item.done", { output_index: index, item: output[index] }),
      ];
    }
    output[index] = { ...item, arguments: text, status };
    return [
      ev("response.function_call_arguments.done", { ...base, name: item.name, arguments: text }),
      ev("response.output_item.done", { output_index: index, item: output[index] }),
    ];
  };
  const begin = (item: Json): SseEvent[] => {
    const index = output.length;
    output.push(item);
    open = { item, index, text: "" };
    return [ev("response.output_item.added", { output_index: index, item })];
  };

  return {
    event(event) {
      switch (event.type) {
        case "start":
          usage.add(event.usage);
          return start();
        case "text": {
          const events = start();
          if (open?.item.type !== "message") {
            events.push(...close(), ...begin({ ...messageItem(randomId("msg_"), "", "in_progress"), content: [] }));
            events.push(ev("response.content_part.added", { item_id: open!.item.id, output_index: open!.index, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } }));
          }
          open!.text += event.text;
          events.push(ev("response.output_text.delta", { item_id: open!.item.id, output_index: open!.index, content_index: 0, delta: event.text, logprobs: [] }));
          return events;
        }
        case "tool_call": {
          const events = [...start(), ...close()];
          events.push(...begin(callItem(randomId("fc_"), event.id, event.name, "", "in_progress")));
          calls.set(event.index, open!);
          return events;
        }
        case "tool_args": {
          const call = calls.get(event.index);
          // Arguments belong to the call being written; a late fragment of an earlier one cannot be placed.
          if (!call || open?.index !== call.index) return [];
          open.text += event.text;
          return [ev("response.function_call_arguments.delta", { item_id: call.item.id, output_index: call.index, delta: event.text })];
        }
        case "finish":
          finish = event.finish;
          return [];
        case "usage":
          usage.add(event.usage);
          return [];
        case "reasoning": {
          // Claude's thinking, sent whole as one reasoning item once its signature closes it (it is sealed whole).
          thinking += event.text;
          if (event.signature === undefined) return [];
          const item = reasoningItem(randomId("rs_"), { text: thinking, signature: event.signature });
          thinking = "";
          if (!item) return [];
          const events = [...start(), ...close()];
          const index = output.length;
          output.push(item);
          events.push(ev("response.output_item.added", { output_index: index, item }), ev("response.output_item.done", { output_index: index, item }));
          return events;
        }
      }
    },
    error(error) {
      // Nothing sent yet (a passthrough's guard, whose upstream named its own response): OpenAI's error event.
      if (!started) return [ev("error", { code: errorCode(error), message: error.message, param: null })];
      const failed = response("failed", { error: { code: errorCode(error), message: error.message } });
      return [...close("incomplete"), ev("response.failed", { response: failed })];
    },
    end() {
      const incomplete = finish && INCOMPLETE[finish.reason];
      const events = [...start(), ...close(incomplete ? "incomplete" : "completed")];
      const done = response("completed", { finish, usage: usage.usage() });
      events.push(ev(incomplete ? "response.incomplete" : "response.completed", { response: done }));
      return events;
    },
  };
}
