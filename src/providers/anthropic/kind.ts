import { settingName, type Kind, type Upstream } from "../kind.ts";

export interface AnthropicSettings {
  apiKey: string;
  /** Without `/v1`: calls go to `{baseUrl}/v1/messages`. */
  baseUrl: string;
}

export const DEFAULT_BASE_URL = "https://api.anthropic.com";

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

export const labelOf = (u: Upstream) => `Anthropic upstream '${u.name}'`;

/** The headers of every call: the key, the API version, the client's betas as sent. */
export function headersOf(u: Upstream<AnthropicSettings>, client?: Headers): Record<string, string> {
  const beta = client?.get("anthropic-beta");
  return { ...u.headers, "x-api-key": u.settings.apiKey, "anthropic-version": "2023-06-01", "content-type": "application/json", ...(beta ? { "anthropic-beta": beta } : {}) };
}
