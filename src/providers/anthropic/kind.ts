import { settingName, type Kind } from "../kind.ts";
import { DEFAULT_BASE_URL, type AnthropicSettings } from "./settings.ts";

/** The Anthropic API (contract 14): Claude's own names, sent as the client wrote them. */
export const anthropicKind: Kind<AnthropicSettings> = {
  keys: { api_key: "string", base_url: "string" },
  required: ["api_key"],
  secrets: ["api_key"],
  settings: (t) => ({
    apiKey: t.api_key === undefined ? "" : String(t.api_key),
    baseUrl: (t.base_url === undefined ? DEFAULT_BASE_URL : String(t.base_url)).replace(/\/+$/, "").replace(/\/v1$/, ""),
  }),
  missing: (u) => (u.settings.apiKey ? undefined : `set ${settingName(u, "api_key")}`),
  build: (u) => import("./provider.ts").then((m) => m.createAnthropicProvider(u)),
  list: (u) => import("./models.ts").then((m) => m.listAnthropicModels(u)),
  where: (s) => s.baseUrl,
  // Claude's names go to Anthropic's own API before Bedrock's profiles of them.
  claude: 1,
};
