import type { ErrorDialect } from "../errors.ts";

/** Whose error envelope a request's caller expects: by path, and for /v1/models by Anthropic's version header. */
export function errorDialect(request: Request): ErrorDialect {
  // CONNECT's target is host:port, not a URL.
  const path = URL.canParse(request.url) ? new URL(request.url).pathname : "";
  if (path.startsWith("/v1/messages")) return "anthropic";
  if (path.startsWith("/v1/responses") || path === "/v1/embeddings" || path === "/v1/completions") return "openai";
  if (path.startsWith("/v1/models") && request.headers.has("anthropic-version")) return "anthropic";
  return "parley";
}
