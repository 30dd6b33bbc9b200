import type { Usage } from "../../ir.ts";
import { sseData } from "../../lib/sse.ts";
import { GatewayError } from "../../errors.ts";
import { settingName, shownUrl, type Upstream as Declared } from "../kind.ts";
import type { NativeCall, NativeReply, Provider } from "../provider.ts";
import { compactsNatively, labelOf, urlOf, type OpenAISettings } from "./settings.ts";
import { fetchError, fetchFailed, parseUpstreamJson, streamedBody, upstreamErrorText, type Upstream } from "../../wire/upstream-errors.ts";
import { checkTextCompletion } from "../../wire/completions/codec.ts";
import { checkEmbeddings } from "../../wire/embeddings/codec.ts";
import { checkResponse } from "../../wire/responses/reply.ts";
import { encodeRequest } from "../../wire/openai-chat/encode-request.ts";
import { checkCompletion, decodeReply } from "../../wire/openai-chat/reply.ts";
import { streamDecoder } from "../../wire/openai-chat/stream.ts";

/**
 * OpenAI, or any server that speaks its API (Ollama, vLLM, LM Studio) via ALPHA_BASE_URL.
 * Plain fetch: the call is one POST, and the SDK's per-call machinery cost more than the rest of
 * a proxied request.
 */
export function createOpenAIProvider(upstream: Declared<OpenAISettings>): Provider {
  const { settings } = upstream;
  const urls = { chat: urlOf(settings, "/chat/completions"), responses: urlOf(settings, "/responses"), completions: urlOf(settings, "/completions"), embeddings: urlOf(settings, "/embeddings") };
  const up: Upstream = { label: labelOf(upstream), url: shownUrl(settings.baseUrl), credentials: settingName(upstream, "api_key") };
  // Local OpenAI-compatible servers often need no key at all.
  const headers = { ...upstream.headers, authorization: `Bearer ${settings.apiKey ?? "none"}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
  // Bun's idle timeout for the socket: closes a call the gateway gave up on (see core/first-byte.ts);
  // the silences of a stream are timed by streamedBody.
  const timeout = upstream.timeoutMs;
  const post = async (body: string, signal: AbortSignal, url = urls.chat) => {
    let response: Response;
    try {
      response = await (upstream.fetch ?? fetch)(url, { method: "POST", body, headers, signal, timeout });
    } catch (error) {
      fetchFailed(up, error);
    }
    if (!response.ok) throw upstreamErrorText(up, response.status, await response.text().catch(() => ""), response.headers.get("retry-after"));
    return response;
  };
  const readBody = async (response: Response) => {
    try {
      return await response.text();
    } catch (error) {
      fetchFailed(up, error, true);
    }
  };
  /** The client's body as sent; the reply as the upstream wrote it, a JSON one checked first. */
  const passthrough = (url: string, check: (body: unknown, up: Upstream) => Usage | undefined) => async ({ body, stream, signal }: NativeCall): Promise<NativeReply> => {
    const response = await post(body, signal, url);
    const contentType = response.headers.get("content-type") ?? (stream ? "text/event-stream" : "application/json");
    if (stream && contentType.includes("text/event-stream")) return { kind: "stream", body: streamedBody(up, response, timeout), contentType, failure: (error) => fetchError(up, error, true) };
    const text = await readBody(response);
    return { kind: "json", body: text, contentType, usage: check(parseUpstreamJson(up, text), up) };
  };

  return {
    name: upstream.name,
    label: up.label,

    async complete(request, model, signal) {
      const response = await post(JSON.stringify(encodeRequest({ ...request, stream: false }, model, settings.systemOnTop)), signal);
      return decodeReply(parseUpstreamJson(up, await readBody(response)), up);
    },

    async *stream(request, model, signal) {
      const response = await post(JSON.stringify(encodeRequest({ ...request, stream: true }, model, settings.systemOnTop)), signal);
      const decode = streamDecoder(up);
      try {
        for await (const ready of sseData(streamedBody(up, response, timeout), up.label)) {
          for (const data of ready) if (data !== "[DONE]") yield* decode(parseChunk(up, data));
        }
      } catch (error) {
        fetchFailed(up, error, true);
      }
    },

    native: {
      "openai-chat": passthrough(urls.chat, checkCompletion),
      "openai-responses": passthrough(urls.responses, checkResponse),
      "openai-completions": passthrough(urls.completions, checkTextCompletion),
      "openai-embeddings": passthrough(urls.embeddings, checkEmbeddings),
      // Codex's compaction goes up as sent only to a server that compacts (contract 26); parley summarizes for the others.
      ...(compactsNatively(settings)
        ? { "openai-responses-compaction": passthrough(urls.responses, checkResponse), "openai-responses-compact": passthrough(urlOf(settings, "/responses/compact"), checkResponse) }
        : {}),
    },
  };
}

/** One SSE data line; an `error` object mid-stream ends the stream as an upstream failure. */
function parseChunk(up: Upstream, data: string): unknown {
  const chunk = parseUpstreamJson(up, data) as { error?: { message?: string } } | null;
  if (chunk?.error) {
    throw new GatewayError(503, "service_unavailable_error", `${up.label} failed in the middle of its reply.`, { upstream: chunk.error.message ?? data.slice(0, 500) });
  }
  return chunk;
}
