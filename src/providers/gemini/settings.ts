import type { Upstream } from "../kind.ts";

export interface GeminiSettings {
  apiKey: string;
  /** Without the API version: calls go to `{baseUrl}/v1beta/models/…`. */
  baseUrl: string;
}

export const DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com";

export const labelOf = (u: Upstream) => `Gemini upstream '${u.name}'`;

/** The headers of every call: the key as the Gemini API takes it. */
export const headersOf = (u: Upstream<GeminiSettings>): Record<string, string> => ({ ...u.headers, "x-goog-api-key": u.settings.apiKey, "content-type": "application/json" });

/** `models/gemini-2.5-pro` (how Gemini names its models in bodies and lists) -> `gemini-2.5-pro`. */
export const bareModel = (model: string) => (model.startsWith("models/") ? model.slice(7) : model);
