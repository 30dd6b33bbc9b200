import { createParser } from "eventsource-parser";
import type { Config } from "../config.ts";
import { GatewayError } from "../errors.ts";
import { decodeReply, encodeRequest, streamDecoder } from "../formats/openai-chat.ts";
import type { Provider } from "./provider.ts";
import { fetchFailed, fromUpstreamStatus, parseUpstreamJson, readUpstreamJson } from "./upstream-errors.ts";

const NAME = "OpenAI upstream";

/**
 * OpenAI, or any server that speaks its API (Ollama, vLLM, LM Studio) via ALPHA_BASE_URL.
 * Plain fetch: the call is one POST, and the SDK's per-call machinery cost more than the rest of
 * a proxied request.
 */
export function createOpenAIProvider(config: Config): Provider {
  const url = `${config.alpha.baseUrl}/chat/completions`;
  // Local OpenAI-compatible servers often need no key at all.
  const headers = { authorization: `Bearer ${config.alpha.apiKey ?? "none"}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
  // Bun's idle timeout for the socket: closes a call the gateway gave up on (see firstByte in chat.ts).
  const timeout = config.upstreamTimeoutMs;
  const post = async (body: string, signal: AbortSignal) => {
    const response = await fetch(url, { method: "POST", body, headers, signal, timeout }).catch(rethrow);
    if (!response.ok) throw fromUpstreamStatus(NAME, response.status, await upstreamMessage(response), response.headers.get("retry-after"));
    return response;
  };

  return {
    async complete(request, model, signal) {
      const response = await post(JSON.stringify(encodeRequest({ ...request, stream: false }, model)), signal);
      return decodeReply((await readUpstreamJson(NAME, response)) as never);
    },

    async *stream(request, model, signal) {
      const response = await post(JSON.stringify(encodeRequest({ ...request, stream: true }, model)), signal);
      const decode = streamDecoder();
      let events: string[] = [];
      const parser = createParser({
        onEvent: ({ data }) => {
          if (data !== "[DONE]") events.push(data);
        },
      });
      const text = new TextDecoder();
      try {
        for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
          parser.feed(text.decode(bytes, { stream: true }));
          const ready = events;
          events = [];
          for (const data of ready) yield* decode(parseChunk(data) as never);
        }
      } catch (error) {
        rethrow(error);
      }
    },

    passthrough: post,
  };
}

/** One SSE data line; an `error` object mid-stream ends the stream as an upstream failure. */
function parseChunk(data: string): unknown {
  const chunk = parseUpstreamJson(NAME, data) as { error?: { message?: string } };
  if (chunk?.error) throw new GatewayError(503, "service_unavailable_error", "The upstream stream failed.", { upstream: chunk.error.message ?? data.slice(0, 500) });
  return chunk;
}

const rethrow = (error: unknown) => fetchFailed(NAME, error);

async function upstreamMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text);
    return body?.error?.message ?? body?.message ?? text;
  } catch {
    return text.slice(0, 500);
  }
}
