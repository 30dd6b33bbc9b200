import { utf8Slice } from "../../lib/bytes.ts";
import { dataOf, firstEventEnd } from "../../lib/sse.ts";
import { isObject, numberOr, type Json } from "../../lib/read.ts";
import type { InputTokens } from "../../ir.ts";
import { checkMessage, renamed, renamedStart } from "../../wire/anthropic/reply.ts";
import { fromAnthropic } from "../../wire/anthropic/usage.ts";
import type { Upstream as Declared } from "../kind.ts";
import type { NativeCall, NativeReply } from "../provider.ts";
import { badShape, fetchError, fetchFailed, parseUpstreamJson, streamedBody, type Upstream } from "../../wire/upstream-errors.ts";
import { anthropicError, streamError } from "../../wire/anthropic/errors.ts";
import { headersOf, type AnthropicSettings } from "./settings.ts";

/**
 * Same family, lossless (contract 14): the client's body goes up byte for byte (its `model`
 * rewritten only when an alias or a route changed it), the reply comes back as Anthropic wrote it,
 * a stream event by event, and errors keep Anthropic's status, type and message.
 */
export function createNative(upstream: Declared<AnthropicSettings>, up: Upstream) {
  const base = upstream.settings.baseUrl;
  const timeout = upstream.timeoutMs;
  const post = async (path: string, call: NativeCall) => {
    const json = call.json ?? (JSON.parse(call.body) as Json);
    const body = json.model === call.model ? call.body : renamed(call.body, json, call.model);
    const response = await (upstream.fetch ?? fetch)(`${base}${path}`, { method: "POST", body, headers: headersOf(upstream, call.headers), signal: call.signal, timeout }).catch((error) => fetchFailed(up, error));
    if (!response.ok) throw anthropicError(up, response.status, await response.text().catch(() => ""), response.headers.get("retry-after"), true);
    return response;
  };

  async function messages(call: NativeCall): Promise<NativeReply> {
    const response = await post("/v1/messages", call);
    const contentType = response.headers.get("content-type") ?? (call.stream ? "text/event-stream" : "application/json");
    if (!call.stream || !contentType.includes("text/event-stream")) {
      const text = await response.text().catch((error) => fetchFailed(up, error, true));
      const reply = parseUpstreamJson(up, text);
      const usage = checkMessage(reply, up);
      return { kind: "json", body: renamed(text, reply as Json, call.requested), contentType, ...(usage ? { usage } : {}) };
    }
    const opening = opened(up, streamedBody(up, response, timeout), call.requested);
    return { kind: "stream", body: opening, contentType, failure: (error) => fetchError(up, error, true), input: opening.input };
  }

  async function countTokens(call: NativeCall): Promise<number> {
    const response = await post("/v1/messages/count_tokens", call);
    const reply = parseUpstreamJson(up, await response.text().catch((error) => fetchFailed(up, error, true)));
    const tokens = isObject(reply) ? numberOr(reply.input_tokens) : undefined;
    if (tokens === undefined) throw badShape(up, "no input_tokens in the count", JSON.stringify(reply));
    return tokens;
  }

  return { messages, countTokens };
}

/**
 * The stream's bytes as Anthropic sent them, but for its first event, message_start, which is read:
 * its usage is the input's (the cache included: message_delta gives the output), and it names the
 * model the client asked for. An `error` event in its place (an overload sent after a 200) is the
 * call failing before the answer began: another upstream may answer.
 */
function opened(up: Upstream, chunks: AsyncIterator<Uint8Array, unknown>, requested: string) {
  let head: Uint8Array | undefined;
  let input: InputTokens | undefined;
  let first = true;
  const reader = {
    input: () => input,
    async next(): Promise<IteratorResult<Uint8Array, unknown>> {
      if (!first) return chunks.next();
      for (;;) {
        const read = await chunks.next();
        if (read.done) {
          first = false;
          return head ? { done: false, value: head } : read;
        }
        head = head ? Buffer.concat([head, read.value]) : read.value;
        const end = firstEventEnd(head);
        if (end < 0 && head.length < MAX_HEAD) continue;
        first = false;
        return { done: false, value: end < 0 ? head : firstEvent(up, head, end, requested, (tokens) => (input = tokens)) };
      }
    },
    return: (reason?: unknown) => chunks.return?.(reason) ?? Promise.resolve({ done: true as const, value: undefined }),
  };
  return reader;
}

/** The head of the stream with its first event read (and the model renamed when it differs). */
function firstEvent(up: Upstream, head: Uint8Array, end: number, requested: string, found: (input: InputTokens) => void): Uint8Array {
  let event: unknown;
  try {
    event = JSON.parse(dataOf(utf8Slice.call(head, 0, end)));
  } catch {
    return head;
  }
  if (!isObject(event)) return head;
  if (event.type === "error") throw streamError(up, event, true);
  if (event.type !== "message_start" || !isObject(event.message)) return head;
  if (isObject(event.message.usage)) found(fromAnthropic(event.message.usage).input);
  if (event.message.model === requested) return head;
  return Buffer.concat([Buffer.from(renamedStart(event, event.message, requested)), head.subarray(end)]);
}

/** Bytes read at most for the first event: message_start is small. */
const MAX_HEAD = 64 * 1024;
