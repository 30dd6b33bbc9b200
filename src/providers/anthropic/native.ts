import { isObject, numberOr, type Json } from "../../lib/read.ts";
import { checkMessage, renamed } from "../../wire/anthropic/reply.ts";
import { openedStream } from "../../wire/anthropic/stream-head.ts";
import type { Upstream as Declared } from "../kind.ts";
import type { NativeCall, NativeReply } from "../provider.ts";
import { badShape, fetchError, fetchFailed, parseUpstreamJson, streamedBody, type Upstream } from "../../wire/upstream-errors.ts";
import { anthropicError } from "../../wire/anthropic/errors.ts";
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
    const opening = openedStream(up, streamedBody(up, response, timeout), call.requested);
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
