import type { Upstream } from "../kind.ts";

export interface AnthropicSettings {
  apiKey: string;
  /** Without `/v1`: calls go to `{baseUrl}/v1/messages`. */
  baseUrl: string;
}

export const DEFAULT_BASE_URL = "https://api.anthropic.com";

export const labelOf = (u: Upstream) => `Anthropic upstream '${u.name}'`;

/** The headers of every call: the key, the API version, the client's betas as sent. */
export function headersOf(u: Upstream<AnthropicSettings>, client?: Headers): Record<string, string> {
  const beta = client?.get("anthropic-beta");
  return { ...u.headers, "x-api-key": u.settings.apiKey, "anthropic-version": "2023-06-01", "content-type": "application/json", ...(beta ? { "anthropic-beta": beta } : {}) };
}
