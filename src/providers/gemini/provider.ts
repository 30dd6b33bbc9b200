import type { ChatRequest, EmbeddingRequest, Embeddings } from "../../ir.ts";
import { decodeBatchEmbed, encodeBatchEmbed } from "../../wire/gemini/embeddings.ts";
import { geminiError } from "../../wire/gemini/errors.ts";
import { fetchFailed, parseUpstreamJson, type Upstream } from "../../wire/upstream-errors.ts";
import { settingName, type Upstream as Declared } from "../kind.ts";
import type { NativeCall, NativeReply, Provider } from "../provider.ts";
import { geminiChat } from "./chat.ts";
import { bareModel, headersOf, labelOf, type GeminiSettings } from "./settings.ts";

/**
 * What a Gemini upstream offers beyond the Provider every kind has, for the edge to declare: the
 * Gemini client's own calls (`generateContent` and the stream, `countTokens`) with the body as sent,
 * and a count of any request through the IR.
 */
export interface GeminiNative {
  generate(call: NativeCall): Promise<NativeReply>;
  countNative(call: NativeCall): Promise<number>;
  count(request: ChatRequest, model: string, signal: AbortSignal): Promise<number>;
}

/** The Gemini API: `{base_url}/v1beta/models/{model}:{method}` with the key in `x-goog-api-key`. */
export function createGeminiProvider(upstream: Declared<GeminiSettings>): Provider & { gemini: GeminiNative } {
  const base = upstream.settings.baseUrl;
  const up: Upstream = { label: labelOf(upstream), url: base, credentials: settingName(upstream, "api_key") };
  const timeout = upstream.timeoutMs;
  const headers = headersOf(upstream);
  const post = async (model: string, method: string, body: string, signal: AbortSignal, verbatim = false) => {
    const url = `${base}/v1beta/models/${encodeURIComponent(bareModel(model))}:${method}`;
    const response = await (upstream.fetch ?? fetch)(url, { method: "POST", body, headers, signal, timeout }).catch((error) => fetchFailed(up, error));
    if (!response.ok) throw geminiError(up, response.status, await response.text().catch(() => ""), response.headers.get("retry-after"), verbatim);
    return response;
  };
  const chat = geminiChat({ up, timeoutMs: timeout, post });

  async function embed(request: EmbeddingRequest, model: string, signal: AbortSignal): Promise<Embeddings> {
    const response = await post(model, "batchEmbedContents", JSON.stringify(encodeBatchEmbed(request, bareModel(model))), signal);
    const text = await response.text().catch((error) => fetchFailed(up, error, true));
    return decodeBatchEmbed(parseUpstreamJson(up, text), up, request.texts.length);
  }

  return {
    name: upstream.name,
    label: up.label,
    complete: (request, model, signal) => chat.complete(request, bareModel(model), signal),
    stream: (request, model, signal) => chat.stream(request, bareModel(model), signal),
    embed,
    // An Anthropic client's count_tokens routed here is counted by Gemini.
    native: { gemini: chat.generate },
    countTokens: { "anthropic-messages": chat.countAnthropic, gemini: chat.countNative },
    // A Gemini client's body names no model (the URL does): it goes up under whatever id the route chose.
    takesNative: (dialect) => dialect === "gemini",
    gemini: { generate: chat.generate, countNative: chat.countNative, count: chat.count },
  };
}
