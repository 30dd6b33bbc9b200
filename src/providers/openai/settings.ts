import type { Upstream } from "../kind.ts";

export interface OpenAISettings {
  baseUrl: string;
  apiKey?: string;
  /** Added to every URL (Azure's `api-version`). */
  query?: Record<string, string>;
  /** Mid-conversation system messages join the system text (chat templates that refuse them in place). */
  systemOnTop: boolean;
  /**
   * Who answers Codex's compaction (contract 26): "native", the server itself (OpenAI's own API
   * does, and so does any base_url that says so); "summary", parley, with a summary the model writes.
   */
  compaction?: "native" | "summary";
}

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** How errors name it: the spec's own upstream as before there were others, a declared one by its name. */
export const labelOf = (u: Upstream) => (u.origin.variables ? "OpenAI upstream" : `OpenAI-compatible upstream '${u.name}'`);

/** Whether the server itself compacts Responses conversations: OpenAI's own API unless told otherwise. */
export const compactsNatively = (s: OpenAISettings) => (s.compaction ?? (s.baseUrl === DEFAULT_BASE_URL ? "native" : "summary")) === "native";

/** The URL of one of the server's paths, with the upstream's query. */
export function urlOf(settings: OpenAISettings, path: string): string {
  const query = settings.query && new URLSearchParams(settings.query).toString();
  return `${settings.baseUrl}${path}${query ? `?${query}` : ""}`;
}
