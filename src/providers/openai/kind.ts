import { settingName, type Kind, type Upstream } from "../kind.ts";

export interface OpenAISettings {
  baseUrl: string;
  apiKey?: string;
  /** Added to every URL (Azure's `api-version`). */
  query?: Record<string, string>;
  /** Mid-conversation system messages join the system text (chat templates that refuse them in place). */
  systemOnTop: boolean;
}

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Any OpenAI-compatible server: OpenAI, Ollama, vLLM, LM Studio, llama.cpp, OpenRouter, Groq, … */
export const openaiKind: Kind<OpenAISettings> = {
  keys: { base_url: "string", api_key: "string", query: "table", system_messages: "string" },
  required: ["base_url"],
  secrets: ["api_key"],
  settings: (t) => ({
    baseUrl: String(t.base_url).replace(/\/+$/, ""),
    ...(t.api_key !== undefined ? { apiKey: String(t.api_key) } : {}),
    ...(t.query !== undefined ? { query: t.query as Record<string, string> } : {}),
    systemOnTop: t.system_messages === "top",
  }),
  // A local server often needs no key; OpenAI itself does.
  missing: (u) => (u.settings.apiKey || u.settings.baseUrl !== DEFAULT_BASE_URL ? undefined : `set ${settingName(u, "api_key")}, or ${settingName(u, "base_url")} for an OpenAI-compatible server`),
  build: (u) => import("./provider.ts").then((m) => m.createOpenAIProvider(u)),
  list: (u) => import("./models.ts").then((m) => m.listOpenAIModels(u)),
  where: (s) => s.baseUrl,
  patterns: [/^(gpt-|text-|dall-e-|chatgpt-|o1|o3|o4|ft:)/],
};


/** How errors name it: the spec's own upstream as before there were others, a declared one by its name. */
export const labelOf = (u: Upstream) => (u.origin.variables ? "OpenAI upstream" : `OpenAI-compatible upstream '${u.name}'`);

/** The URL of one of the server's paths, with the upstream's query. */
export function urlOf(settings: OpenAISettings, path: string): string {
  const query = settings.query && new URLSearchParams(settings.query).toString();
  return `${settings.baseUrl}${path}${query ? `?${query}` : ""}`;
}
