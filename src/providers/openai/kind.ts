import { settingName, type Kind } from "../kind.ts";
import { known } from "../models.ts";
import { DEFAULT_BASE_URL, type OpenAISettings } from "./settings.ts";

export { DEFAULT_BASE_URL, type OpenAISettings } from "./settings.ts";

/** Any OpenAI-compatible server: OpenAI, Ollama, vLLM, LM Studio, llama.cpp, OpenRouter, Groq, … */
export const openaiKind: Kind<OpenAISettings> = {
  keys: { base_url: "string", api_key: "string", query: "table", system_messages: "string", compaction: "string" },
  required: ["base_url"],
  secrets: ["api_key"],
  settings: (t) => ({
    baseUrl: String(t.base_url).replace(/\/+$/, ""),
    ...(t.api_key !== undefined ? { apiKey: String(t.api_key) } : {}),
    ...(t.query !== undefined ? { query: t.query as Record<string, string> } : {}),
    systemOnTop: t.system_messages === "top",
    ...(t.compaction === "native" || t.compaction === "summary" ? { compaction: t.compaction } : {}),
  }),
  // A local server often needs no key; OpenAI itself does.
  missing: (u) => (u.settings.apiKey || u.settings.baseUrl !== DEFAULT_BASE_URL ? undefined : `set ${settingName(u, "api_key")}, or ${settingName(u, "base_url")} for an OpenAI-compatible server`),
  build: (u) => import("./provider.ts").then((m) => m.createOpenAIProvider(u)),
  list: (u) => import("./models.ts").then((m) => m.listOpenAIModels(u)),
  where: (s) => s.baseUrl,
  patterns: [/^(gpt-|text-|dall-e-|chatgpt-|o1|o3|o4|ft:)/],
  catalogue: known([
    ["gpt-4o", "openai", "2024-05-13"],
    ["gpt-4o-mini", "openai", "2024-07-18"],
    ["gpt-4.1", "openai", "2025-04-14"],
    ["gpt-4.1-mini", "openai", "2025-04-14"],
    ["o3-mini", "openai", "2025-01-31"],
    ["o4-mini", "openai", "2025-04-16"],
  ]),
};
