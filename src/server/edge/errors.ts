import { GatewayError, type ErrorDialect } from "../../errors.ts";
import { errorBody } from "../../wire/error-body.ts";
import { overflowMessage } from "../../wire/anthropic/errors.ts";
import { exceptionOf } from "../../wire/aws-errors.ts";
import type { Logger } from "../../log.ts";
import { maskSecrets } from "../../secrets.ts";

export const REQUEST_ID = "x-request-id";

/** Whose error envelope a caller expects: parley's, OpenAI's, Anthropic's (contract 9), Gemini's (23), or Bedrock Runtime's (17). */
export type Renderer = ErrorDialect | "bedrock";

/**
 * The id headers a vendor's clients read besides `X-Request-Id`, set on every answer in that dialect:
 * Anthropic's clients quote `request-id`, the AWS SDKs `x-amzn-RequestId`.
 */
export function idHeaders(renderer: Renderer, id: string, headers: Record<string, string>): void {
  if (renderer === "anthropic") headers["request-id"] = id;
  else if (renderer === "bedrock") headers["x-amzn-requestid"] = id;
}

/**
 * A failed request's answer in the caller's dialect: its own status for a GatewayError, 499 (and
 * no body) when the client went away, else a 500 quoting the request id, with the error logged.
 */
export function failure(error: unknown, request: Request, headers: Record<string, string>, renderer: Renderer, debug: boolean, log: Logger): Response {
  if (request.signal.aborted) return new Response(null, { status: 499, headers });
  if (error instanceof GatewayError) return render(error, renderer, headers, debug);
  log.error(`request ${headers[REQUEST_ID]} failed:`, error);
  return render(new GatewayError(500, "internal_server_error", `Internal error; quote request id ${headers[REQUEST_ID]} when reporting it.`), renderer, headers, debug);
}

/** The error as JSON in the renderer's envelope, with the answer's headers and the error's own. */
export function render(error: GatewayError, renderer: Renderer, headers: Record<string, string>, debug: boolean): Response {
  if (renderer === "bedrock") return bedrockError(error, headers, debug);
  return json(errorBody(error, renderer, debug), error.status, { ...headers, ...error.headers });
}

/**
 * A failure as Bedrock Runtime answers one: the exception's name in `x-amzn-ErrorType`, its status,
 * and `{"message"}`, which the AWS SDKs raise as their typed exceptions (ThrottlingException, …).
 */
function bedrockError(error: GatewayError, headers: Record<string, string>, debug: boolean): Response {
  const [name, status] = exceptionOf(error.status);
  return json({ message: messageOf(error, debug) }, status, { ...headers, ...error.headers, "x-amzn-errortype": `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/` });
}

/** An error body with every configured secret masked: an upstream may quote what it was sent, parley's key or a password in its URL (contract 25). */
function json(body: unknown, status: number, headers: Record<string, string>): Response {
  return new Response(maskSecrets(JSON.stringify(body)), { status, headers: { "content-type": "application/json", ...headers } });
}

/** A context overflow in Anthropic's words ("prompt is too long"), which Claude Code acts on in Bedrock mode too. */
function messageOf(error: GatewayError, debug: boolean): string {
  if (error.overflow) return overflowMessage(error.overflow);
  const details = debug && error.upstream ? error.upstream : error.details;
  return details && debug ? `${error.message} (${details})` : error.message;
}

/** Whose envelope a request no endpoint takes (404, 405) gets: by path, as the endpoints under it would answer. */
export function rendererOf(path: string, request: Request): Renderer {
  if (path.startsWith("/v1/messages") || path.startsWith("/v1/projects/")) return "anthropic";
  if (path.startsWith("/v1beta/")) return "gemini";
  if (path.startsWith("/v1/responses") || path === "/v1/embeddings" || path === "/v1/completions") return "openai";
  if (path.startsWith("/v1/models") && request.headers.has("anthropic-version")) return "anthropic";
  return "parley";
}
