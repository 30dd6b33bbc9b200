import type { ChatRequest } from "../../ir.ts";
import { geminiError } from "../../wire/gemini/errors.ts";
import { fetchFailed, type Upstream } from "../../wire/upstream-errors.ts";
import { anthropicError } from "../../wire/anthropic/errors.ts";
import { geminiChat } from "../gemini/chat.ts";
import type { GeminiNative } from "../gemini/provider.ts";
import { bareModel } from "../gemini/settings.ts";
import type { Upstream as Declared } from "../kind.ts";
import type { Provider } from "../provider.ts";
import { vertexClaude } from "./claude.ts";
import { createTokens, type Tokens } from "./credentials.ts";
import { vertexEmbeddings } from "./embeddings.ts";
import { isClaude } from "./model-ids.ts";
import { credentialsOf, hostOf, labelOf, modelUrl, type VertexSettings } from "./settings.ts";

/**
 * Vertex AI: one project in one region, Claude (publisher `anthropic`) and Gemini (publisher
 * `google`) under one Google Cloud account, each in its own vendor's dialect, with a bearer token.
 */
export function createVertexProvider(upstream: Declared<VertexSettings>): Provider & { gemini: GeminiNative; tokens: Tokens } {
  const { settings } = upstream;
  const up: Upstream = { label: labelOf(upstream), url: hostOf(settings), credentials: credentialsOf(upstream) };
  const timeoutMs = upstream.timeoutMs;
  const fetcher = upstream.fetch ?? fetch;
  // Token exchanges go out directly, never through a cassette: a recorded exchange would keep the token.
  const tokens = createTokens(settings, up, fetch, timeoutMs);

  async function call(publisher: "anthropic" | "google", model: string, method: string, body: string, signal: AbortSignal, extra?: Record<string, string>) {
    const headers = { ...upstream.headers, ...extra, authorization: `Bearer ${await tokens.token()}`, "content-type": "application/json" };
    const response = await fetcher(modelUrl(settings, publisher, model, method), { method: "POST", body, headers, signal, timeout: timeoutMs }).catch((error) => fetchFailed(up, error));
    // A token revoked or expired early: the next call asks for a new one.
    if (response.status === 401) tokens.forget();
    return response;
  }
  const googlePost = async (model: string, method: string, body: string, signal: AbortSignal, verbatim = false) => {
    const response = await call("google", bareModel(model), method, body, signal);
    if (!response.ok) throw geminiError(up, response.status, await response.text().catch(() => ""), response.headers.get("retry-after"), verbatim);
    return response;
  };
  const claudePost = async (model: string, method: string, body: string, signal: AbortSignal, headers?: Record<string, string>, verbatim = false) => {
    const response = await call("anthropic", model, method, body, signal, headers);
    if (!response.ok) throw anthropicError(up, response.status, await response.text().catch(() => ""), response.headers.get("retry-after"), verbatim);
    return response;
  };
  const gemini = geminiChat({ up, timeoutMs, post: googlePost, flatCount: true });
  const claude = vertexClaude({ up, timeoutMs, post: claudePost });

  return {
    name: upstream.name,
    label: up.label,
    complete: (request, model, signal) => (isClaude(model) ? claude.complete(request, model, signal) : gemini.complete(request, bareModel(model), signal)),
    stream: (request, model, signal) => (isClaude(model) ? claude.stream(request, model, signal) : gemini.stream(request, bareModel(model), signal)),
    embed: vertexEmbeddings(up, googlePost),
    native: { "anthropic-messages": claude.messages, gemini: (c) => gemini.generate({ ...c, model: bareModel(c.model) }) },
    countTokens: {
      "anthropic-messages": (c) => (isClaude(c.model) ? claude.countTokens(c) : gemini.countAnthropic(c)),
      gemini: (c) => gemini.countNative({ ...c, model: bareModel(c.model) }),
    },
    // A client's body goes to any model of its own family here (the URL names it), however the route named it.
    takesNative: (dialect, model) => (dialect === "anthropic-messages" ? isClaude(model) : dialect === "gemini" && !isClaude(model)),
    gemini: {
      generate: gemini.generate,
      countNative: gemini.countNative,
      count: (request: ChatRequest, model: string, signal: AbortSignal) => gemini.count(request, bareModel(model), signal),
    },
    tokens,
  };
}
