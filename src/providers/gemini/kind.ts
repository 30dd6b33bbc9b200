import { settingName, type Kind } from "../kind.ts";
import { DEFAULT_BASE_URL, type GeminiSettings } from "./settings.ts";

/** The Gemini API (contract 23): Gemini's own models, by their own names. */
export const geminiKind: Kind<GeminiSettings> = {
  keys: { api_key: "string", base_url: "string" },
  required: ["api_key"],
  secrets: ["api_key"],
  settings: (t) => ({
    apiKey: t.api_key === undefined ? "" : String(t.api_key),
    baseUrl: (t.base_url === undefined ? DEFAULT_BASE_URL : String(t.base_url)).replace(/\/+$/, "").replace(/\/v1(beta)?$/, ""),
  }),
  missing: (u) => (u.settings.apiKey ? undefined : `set ${settingName(u, "api_key")}`),
  build: (u) => import("./provider.ts").then((m) => m.createGeminiProvider(u)),
  list: (u) => import("./models.ts").then((m) => m.listGeminiModels(u)),
  where: (s) => s.baseUrl,
  patterns: [/^(gemini|gemma|learnlm)-/],
  // Vertex serves Gemini's models too: gemini-* fails over to it.
  sharesIds: true,
};
