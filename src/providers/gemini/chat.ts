import type { ChatRequest, StreamEvent } from "../../ir.ts";
import { decodeRequest as decodeAnthropic } from "../../wire/anthropic/decode-request.ts";
import { decodeCount, encodeCount } from "../../wire/gemini/count.ts";
import { encodeRequest } from "../../wire/gemini/encode-request.ts";
import { decodeReply } from "../../wire/gemini/reply.ts";
import { streamDecoder } from "../../wire/gemini/stream.ts";
import { fromGemini } from "../../wire/gemini/usage.ts";
import type { NativeCall, NativeReply } from "../provider.ts";
import { badShape, fetchError, fetchFailed, incomplete, parseUpstreamJson, streamedBody, type Upstream } from "../../wire/upstream-errors.ts";
import { isObject, type Json } from "../../lib/read.ts";
import { sseJson } from "./sse.ts";

/** How one upstream that speaks `generateContent` is reached: the Gemini API with its key, Vertex with a token. */
export interface GeminiTransport {
  up: Upstream;
  timeoutMs: number;
  /** POST to the model's `:method` (with its query); an error status thrown as Gemini's error (`verbatim`: its words kept). */
  post(model: string, method: string, body: string, signal: AbortSignal, verbatim?: boolean): Promise<Response>;
  /** Vertex counts the request's fields given at the top; the Gemini API wants them in `generateContentRequest`. */
  flatCount?: boolean;
}

/** Chat, counts and the native path for Gemini's clients, over either transport, with the one Gemini wire module. */
export function geminiChat({ up, timeoutMs, post, flatCount }: GeminiTransport) {
  const text = (response: Response) => response.text().catch((error) => fetchFailed(up, error, true));

  async function complete(request: ChatRequest, model: string, signal: AbortSignal) {
    const response = await post(model, "generateContent", JSON.stringify(encodeRequest(request, up.label, model)), signal);
    return decodeReply(parseUpstreamJson(up, await text(response)), up);
  }

  async function* stream(request: ChatRequest, model: string, signal: AbortSignal): AsyncGenerator<StreamEvent> {
    const response = await post(model, "streamGenerateContent?alt=sse", JSON.stringify(encodeRequest(request, up.label, model)), signal);
    const decode = streamDecoder(up);
    let chunks = 0;
    let finished = false;
    for await (const chunk of sseJson(up, response, timeoutMs)) {
      chunks++;
      for (const event of decode(chunk)) {
        if (event.type === "finish") finished = true;
        yield event;
      }
    }
    // Gemini's stream has no closing event: one without a finish reason was cut short.
    if (!finished) throw incomplete(up.label, chunks === 0);
  }

  async function count(request: ChatRequest, model: string, signal: AbortSignal): Promise<number> {
    const response = await post(model, "countTokens", JSON.stringify(encodeCount(request, up.label, model, flatCount)), signal);
    return decodeCount(parseUpstreamJson(up, await text(response)), up);
  }

  /** A Gemini client's body, as sent, to the model the route chose; the reply as Gemini wrote it. */
  async function generate(call: NativeCall): Promise<NativeReply> {
    const method = call.stream ? "streamGenerateContent?alt=sse" : "generateContent";
    const response = await post(call.model, method, call.body, call.signal, true);
    const contentType = response.headers.get("content-type") ?? (call.stream ? "text/event-stream" : "application/json");
    if (!call.stream) {
      const body = await text(response);
      const reply = parseUpstreamJson(up, body);
      if (!isObject(reply)) throw badShape(up, "a reply that is not an object", body);
      const usage = fromGemini(reply.usageMetadata);
      return { kind: "json", body, contentType, ...(usage ? { usage } : {}) };
    }
    return { kind: "stream", body: streamedBody(up, response, timeoutMs), contentType, failure: (error) => fetchError(up, error, true) };
  }

  /** A Gemini client's `:countTokens` body as sent. */
  async function countNative(call: NativeCall): Promise<number> {
    const response = await post(call.model, "countTokens", call.body, call.signal, true);
    return decodeCount(parseUpstreamJson(up, await text(response)), up);
  }

  /** An Anthropic client's count_tokens body, counted by Gemini. */
  const countAnthropic = (call: NativeCall) => count(decodeAnthropic((call.json ?? JSON.parse(call.body)) as Json, { files: false, includeUsage: false, defaultMaxTokens: 1 }), call.model, call.signal);

  return { complete, stream, count, generate, countNative, countAnthropic };
}
