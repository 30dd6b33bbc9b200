import type { ChatReply, ChatRequest, Message, SseEvent } from "../../ir.ts";
import { isObject, type Json } from "../../lib/read.ts";
import { isSealed } from "../../lib/seal.ts";
import { randomId, type Codec, type StreamEncoder } from "../codec.ts";
import { usageTracker } from "../usage.ts";
import { decodeRequest } from "./decode-request.ts";
import { now, responseObject } from "./reply.ts";
import { compactionItem } from "./sealed.ts";
import { errorCode } from "./stream.ts";
import { toResponses } from "./usage.ts";

/**
 * Codex's compaction on a converted route (contract 26): a `compaction_trigger` as the last input
 * item of `POST /v1/responses`, or `POST /v1/responses/compact`. The model is asked for a summary
 * of the conversation, and the answer is exactly one `compaction` item holding it, sealed; sent back,
 * the item is expanded into the summary again (decode-request.ts). A server that compacts itself
 * (OpenAI's) gets these dialects natively instead.
 */

const PROMPT = `Your context is about to be compacted. Write a summary of the conversation so far that lets you
continue the work without it: the user's goals and instructions, decisions made and why, the files,
commands and identifiers involved, what is done, what was tried and failed, and what remains to do
next. Write only the summary.`;

/** Whether the input holds a compaction item parley sealed (a summary only parley can read). */
export const madeByParley = (body: Json) =>
  Array.isArray(body.input) && body.input.some((item) => isObject(item) && item.type === "compaction" && typeof item.encrypted_content === "string" && isSealed(item.encrypted_content));

/** The conversation without its trigger, with the request for a summary last, never streamed by the tools. */
function summaryRequest(body: Json, stream: boolean): ChatRequest {
  const input = Array.isArray(body.input) ? body.input.filter((item) => !(isObject(item) && item.type === "compaction_trigger")) : body.input;
  const request = decodeRequest({ ...body, input, stream });
  const ask = { type: "text" as const, text: PROMPT };
  const last = request.messages.at(-1);
  // Joined to a last user turn: some upstreams (Converse) refuse two user turns in a row.
  const messages: Message[] = last?.role === "user" ? [...request.messages.slice(0, -1), { ...last, content: [...last.content, ask] }] : [...request.messages, { role: "user", content: [ask] }];
  return { ...request, messages, ...(request.tools ? { toolChoice: { type: "none" } } : {}) };
}

const textOf = (reply: ChatReply) => reply.content.filter((p) => p.type === "text").map((p) => p.text).join("");

/** `POST /v1/responses` with a trigger: a response whose output is the one compaction item. */
export const compaction: Codec = {
  decodeRequest: (body) => summaryRequest(body, body.stream === true),
  encodeReply: (reply, model) => responseObject(randomId("resp_"), now(), model, "completed", [compactionItem(randomId("cmp_"), textOf(reply))], { usage: reply.usage }),
  streamEncoder: compactionStream,
  lastEvent: "response.completed",
  endEvents: ["response.completed", "response.incomplete", "response.failed", "error"],
  dialect: "openai-responses-compaction",
};

/**
 * `POST /v1/responses/compact`: the compacted conversation, the client's user messages then the
 * compaction item, as OpenAI's `response.compaction` object. Made per request: it returns the body's own messages.
 */
export function compact(body: Json): Codec {
  const items = Array.isArray(body.input) ? body.input : typeof body.input === "string" ? [{ role: "user", content: body.input }] : [];
  const users = items.filter((item) => isObject(item) && (item.type ?? "message") === "message" && item.role === "user").map((item) => userItem(item as Json));
  return {
    decodeRequest: (json) => summaryRequest(json, false),
    encodeReply: (reply) => ({
      id: randomId("resp_"), object: "response.compaction", created_at: now(),
      output: [...users, compactionItem(randomId("cmp_"), textOf(reply))],
      usage: toResponses(reply.usage ?? { input: { total: 0, cacheRead: 0, cacheWrite: 0 }, output: 0 }),
    }),
    streamEncoder: compactionStream,
    lastEvent: "response.completed",
    dialect: "openai-responses-compact",
  };
}

/** A user message as an output item: typed, its text as input_text parts. */
const userItem = (item: Json): Json => ({
  ...item, type: "message", role: "user",
  content: typeof item.content === "string" ? [{ type: "input_text", text: item.content }] : item.content,
});

/** The Responses event grammar around one compaction item, written once the summary is complete (it is sealed whole). */
function compactionStream(model: string): StreamEncoder {
  const id = randomId("resp_");
  const createdAt = now();
  let sequence = 0;
  let started = false;
  let summary = "";
  const usage = usageTracker();
  const ev = (type: string, fields: Json): SseEvent => ({ event: type, data: { type, sequence_number: sequence++, ...fields } });
  const start = (): SseEvent[] => {
    if (started) return [];
    started = true;
    const response = responseObject(id, createdAt, model, "in_progress", []);
    return [ev("response.created", { response }), ev("response.in_progress", { response })];
  };
  return {
    event(event) {
      if (event.type === "start" || event.type === "usage") usage.add(event.usage);
      if (event.type === "text") summary += event.text;
      return start();
    },
    error(error) {
      if (!started) return [ev("error", { code: errorCode(error), message: error.message, param: null })];
      return [ev("response.failed", { response: responseObject(id, createdAt, model, "failed", [], { error: { code: errorCode(error), message: error.message } }) })];
    },
    end() {
      const item = compactionItem(randomId("cmp_"), summary);
      return [
        ...start(),
        ev("response.output_item.added", { output_index: 0, item }),
        ev("response.output_item.done", { output_index: 0, item }),
        ev("response.completed", { response: responseObject(id, createdAt, model, "completed", [item], { usage: usage.usage() }) }),
      ];
    },
  };
}
