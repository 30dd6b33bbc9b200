import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from "openai";
import type { Config } from "../config.ts";
import { GatewayError } from "../errors.ts";
import { decodeReply, encodeRequest, streamDecoder } from "../formats/openai-chat.ts";
import type { Provider } from "./provider.ts";
import { fromUpstreamStatus, unreachable } from "./upstream-errors.ts";

const NAME = "OpenAI upstream";

/** OpenAI, or any server that speaks its API (Ollama, vLLM, LM Studio) via ALPHA_BASE_URL. */
export function createOpenAIProvider(config: Config): Provider {
  const { baseUrl } = config.alpha;
  // Local OpenAI-compatible servers often need no key at all.
  const apiKey = config.alpha.apiKey ?? "none";
  const client = new OpenAI({ apiKey, baseURL: baseUrl, maxRetries: 0, timeout: 2 ** 31 - 1 });
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json", accept: "application/json, text/event-stream" };

  return {
    async complete(request, model, signal) {
      const body = encodeRequest({ ...request, stream: false }, model);
      const reply = await client.chat.completions.create(body as never, { signal }).catch(rethrow);
      return decodeReply(reply as never);
    },

    async *stream(request, model, signal) {
      const body = encodeRequest({ ...request, stream: true }, model);
      const stream = await client.chat.completions.create(body as never, { signal }).catch(rethrow);
      const decode = streamDecoder();
      try {
        for await (const chunk of stream as unknown as AsyncIterable<never>) yield* decode(chunk);
      } catch (error) {
        rethrow(error);
      }
    },

    async passthrough(body, signal) {
      const response = await fetch(`${baseUrl}/chat/completions`, { method: "POST", body, headers, signal }).catch(rethrow);
      if (!response.ok) throw fromUpstreamStatus(NAME, response.status, await upstreamMessage(response), response.headers.get("retry-after"));
      return response;
    },
  };
}

function rethrow(error: unknown): never {
  if (error instanceof GatewayError) throw error;
  if (error instanceof APIUserAbortError || (error instanceof Error && error.name === "AbortError")) throw error;
  if (error instanceof APIConnectionError) throw unreachable(NAME, error.cause instanceof Error ? error.cause.message : error.message);
  if (error instanceof APIError) {
    const message = (error.error as { message?: string } | undefined)?.message ?? error.message;
    if (error.status === undefined) throw new GatewayError(503, "service_unavailable_error", "The upstream stream failed.", { upstream: message });
    throw fromUpstreamStatus(NAME, error.status, message, error.headers?.get("retry-after"));
  }
  if (error instanceof TypeError) throw unreachable(NAME, error.message);
  throw error;
}

async function upstreamMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text);
    return body?.error?.message ?? body?.message ?? text;
  } catch {
    return text.slice(0, 500);
  }
}
