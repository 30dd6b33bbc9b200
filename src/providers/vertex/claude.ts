import type { ChatReply, ChatRequest, StreamEvent } from "../../ir.ts";
import { isObject, numberOr, type Json } from "../../lib/read.ts";
import { encodeRequest } from "../../wire/anthropic/encode-request.ts";
import { checkMessage, decodeReply, renamed } from "../../wire/anthropic/reply.ts";
import { streamDecoder } from "../../wire/anthropic/stream.ts";
import { toVertexBody, VERTEX_ANTHROPIC_VERSION } from "../../wire/anthropic/vertex.ts";
import { badShape, fetchError, fetchFailed, parseUpstreamJson, streamedBody, type Upstream } from "../../wire/upstream-errors.ts";
import { streamError } from "../../wire/anthropic/errors.ts";
import { sseJson } from "../gemini/sse.ts";
import type { NativeCall, NativeReply } from "../provider.ts";
import { openedStream } from "../../wire/anthropic/stream-head.ts";

/**
 * Claude on Vertex (`publishers/anthropic/models/{m}:rawPredict`, `:streamRawPredict`): the
 * Anthropic Messages body with `anthropic_version: "vertex-2023-10-16"` and no `model` (the URL
 * names it), answered as Anthropic answers. Through the one Anthropic wire module, as Claude on
 * Bedrock; an Anthropic client's body goes up with only those two edits.
 */
export interface ClaudeTransport {
  up: Upstream;
  timeoutMs: number;
  /** POST to the model's `:method`; `verbatim`: an Anthropic client's, whose errors keep Anthropic's words. */
  post(model: string, method: string, body: string, signal: AbortSignal, headers?: Record<string, string>, verbatim?: boolean): Promise<Response>;
}

export function vertexClaude({ up, timeoutMs, post }: ClaudeTransport) {
  const body = (request: ChatRequest, stream: boolean) => JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...encodeRequest(request, up.label), ...(stream ? { stream: true } : {}) });
  const text = (response: Response) => response.text().catch((error) => fetchFailed(up, error, true));

  async function complete(request: ChatRequest, model: string, signal: AbortSignal): Promise<ChatReply> {
    const response = await post(model, "rawPredict", body(request, false), signal);
    return decodeReply(parseUpstreamJson(up, await text(response)), up, request);
  }

  async function* stream(request: ChatRequest, model: string, signal: AbortSignal): AsyncGenerator<StreamEvent> {
    const response = await post(model, "streamRawPredict", body(request, true), signal);
    const decode = streamDecoder(up, request);
    let started = false;
    for await (const event of sseJson(up, response, timeoutMs)) {
      // An overload sent as the first event, after a 200: nothing has reached the client, another upstream may answer.
      if (!started && isObject(event) && event.type === "error") throw streamError(up, event, false);
      started = true;
      yield* decode(event);
    }
  }

  async function messages(call: NativeCall): Promise<NativeReply> {
    const beta = call.headers?.get("anthropic-beta");
    const headers = beta ? { "anthropic-beta": beta } : undefined;
    const response = await post(call.model, call.stream ? "streamRawPredict" : "rawPredict", toVertexBody(call.body, call.json ?? (JSON.parse(call.body) as Json)), call.signal, headers, true);
    if (!call.stream) {
      const raw = await text(response);
      const reply = parseUpstreamJson(up, raw);
      const usage = checkMessage(reply, up);
      // Vertex names the model in its reply as Anthropic does (or not at all): the client's own id goes back.
      const named = isObject(reply) && typeof reply.model === "string" ? renamed(raw, reply, call.requested) : raw;
      return { kind: "json", body: named, contentType: "application/json", ...(usage ? { usage } : {}) };
    }
    const opening = openedStream(up, streamedBody(up, response, timeoutMs), call.requested);
    return { kind: "stream", body: opening, contentType: "text/event-stream", failure: (error) => fetchError(up, error, true), input: opening.input };
  }

  /** `count-tokens:rawPredict`: the body with its model (the path names none) and Vertex's version, as Anthropic's Vertex SDK sends it. */
  async function countTokens(call: NativeCall): Promise<number> {
    const json = call.json ?? (JSON.parse(call.body) as Json);
    const { stream: _stream, ...rest } = json;
    const response = await post("count-tokens", "rawPredict", JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest, model: call.model }), call.signal, undefined, true);
    const reply = parseUpstreamJson(up, await text(response));
    const tokens = isObject(reply) ? numberOr(reply.input_tokens) : undefined;
    if (tokens === undefined) throw badShape(up, "no input_tokens in the count", JSON.stringify(reply));
    return tokens;
  }

  return { complete, stream, messages, countTokens };
}
