import { GatewayError } from "../../errors.ts";
import { isObject, stringOr, type Json } from "../../lib/read.ts";
import { fromUpstreamStatus, type Upstream } from "../upstream-errors.ts";

/**
 * Google's error envelope, `{"error": {"code", "message", "status"}}` (the status a
 * google.rpc.Code word), both ways: read from the Gemini API and Vertex, written for Gemini's clients.
 */

const WORDS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  405: "INVALID_ARGUMENT",
  409: "ABORTED",
  413: "INVALID_ARGUMENT",
  422: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  501: "UNIMPLEMENTED",
  502: "UNAVAILABLE",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

export const statusWord = (status: number) => WORDS[status] ?? (status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION");

/** The error body a Gemini client reads; a context overflow in Gemini's own words. */
export function errorBody(error: GatewayError, debug = false): Json {
  const { limit, tokens } = error.overflow ?? {};
  const overflow = error.overflow && `The input token count${tokens === undefined ? "" : ` (${tokens})`} exceeds the maximum number of tokens allowed${limit === undefined ? "" : ` (${limit})`}.`;
  const details = debug && error.upstream ? error.upstream : error.details;
  const message = overflow ?? (details ? `${error.message} (${details})` : error.message);
  const status = error.overflow ? 400 : error.status;
  return { error: { code: status, message, status: statusWord(status) } };
}

/** Gemini's words for a prompt over the model's context. */
const OVERFLOW = /input token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)/i;

/**
 * A Gemini API or Vertex error reply -> GatewayError. A key Gemini does not take comes as a 400
 * (`API_KEY_INVALID`): parley's credentials, as a 401 would be. A 429 says when to retry in its
 * details (`RetryInfo.retryDelay`, "31s") when no header does. `verbatim`: for a Gemini client
 * whose body went up as sent, a 4xx about the request keeps Gemini's message.
 */
export function geminiError(up: Upstream, status: number, text: string, retryAfter: string | null, verbatim = false): GatewayError {
  const error = errorObject(text);
  const message = stringOr(error?.message) ?? text.slice(0, 500);
  const details = Array.isArray(error?.details) ? error.details.filter(isObject) : [];
  const keyRefused = details.some((d) => d.reason === "API_KEY_INVALID" || d.reason === "API_KEY_EXPIRED");
  const retryDelay = details.map((d) => stringOr(d.retryDelay)).find((d) => d !== undefined);
  // Google's 403 (PERMISSION_DENIED) is about the caller's IAM: parley's credentials, as a 401 is.
  const effective = keyRefused || status === 403 ? 401 : status;
  const overflow = OVERFLOW.exec(message);
  if (overflow) {
    return new GatewayError(400, "invalid_request_error", `${up.label}: the prompt is too long for the model's context.`, {
      upstream: message, upstreamStatus: status, overflow: { tokens: Number(overflow[1]), limit: Number(overflow[2]) },
    });
  }
  const mapped = fromUpstreamStatus(up, effective, message, retryAfter ?? (retryDelay ? String(Number.parseFloat(retryDelay)) : null), undefined, error);
  if (!verbatim || effective === 401 || effective === 403 || mapped.status < 400 || mapped.status >= 500 || mapped.status === 429) return mapped;
  return new GatewayError(mapped.status, mapped.type, message, { upstream: message, upstreamStatus: status, retryable: mapped.retryable, headers: mapped.headers });
}

function errorObject(text: string): Json | undefined {
  try {
    const body = JSON.parse(text);
    // Google sends some errors as a one-element list.
    const first = Array.isArray(body) ? body[0] : body;
    return isObject(first) && isObject(first.error) ? first.error : undefined;
  } catch {
    return undefined;
  }
}
