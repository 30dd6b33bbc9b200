import type { Upstream } from "../kind.ts";

export interface AnthropicSettings {
  apiKey: string;
  /** Without `/v1`: calls go to `{baseUrl}/v1/messages`. */
  baseUrl: string;
}

export const DEFAULT_BASE_URL = "https://api.anthropic.com";

export const labelOf = (u: Upstream) => `Anthropic upstream '${u.name}'`;

/** The API version sent when the client named none (a client of another dialect). */
const VERSION = "2023-06-01";

/**
 * The headers of every call: the key; the client's API version, betas and Claude Code's session id
 * as sent (contract 26: a direct connection would send them).
 */
export function headersOf(u: Upstream<AnthropicSettings>, client?: Headers): Record<string, string> {
  const headers: Record<string, string> = { ...u.headers, "x-api-key": u.settings.apiKey, "anthropic-version": client?.get("anthropic-version") || VERSION, "content-type": "application/json" };
  for (const name of FORWARDED) {
    const value = client?.get(name);
    if (value) headers[name] = value;
  }
  return headers;
}

const FORWARDED = ["anthropic-beta", "x-claude-code-session-id"];
