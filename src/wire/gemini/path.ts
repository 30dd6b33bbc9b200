/**
 * The Gemini API's paths and keys as its clients send them: `/v1beta/models/{model}:{method}` (and
 * `/v1/…`, the `@google/genai` SDK's default), the key in `x-goog-api-key`, `?key=` or a bearer.
 */

export interface GeminiPath {
  version: "v1" | "v1beta";
  model: string;
  method: string;
}

const PATH = /^\/(v1|v1beta)\/models\/([^/:]+):([A-Za-z]+)$/;

export function geminiPath(pathname: string): GeminiPath | undefined {
  const match = PATH.exec(pathname);
  return match ? { version: match[1] as GeminiPath["version"], model: decodeURIComponent(match[2]!), method: match[3]! } : undefined;
}

/** The caller's key, wherever Gemini's clients put it. */
export function geminiKey(headers: Headers, url: URL): string | undefined {
  const bearer = headers.get("authorization");
  return headers.get("x-goog-api-key") ?? url.searchParams.get("key") ?? (bearer?.startsWith("Bearer ") ? bearer.slice(7) : undefined);
}

/** Whether a request is a Gemini client's (for `GET /v1/models`, which answers in the caller's dialect). */
export const isGeminiClient = (headers: Headers, url: URL) => headers.has("x-goog-api-key") || url.searchParams.has("key");
