import { GatewayError, type ContextOverflow } from "../../errors.ts";
import { isObject, stringOr } from "../../lib/read.ts";
import { upstreamErrorText, type Upstream } from "../upstream-errors.ts";

/**
 * Anthropic's errors both ways: an upstream's error reply or `error` event read (its type kept for
 * an Anthropic client), and a failure written for an Anthropic client.
 */

/** Anthropic's error types and the status each comes with; parley's own 502/503/504 are its `api_error`. */
const STATUS_OF_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/** The client errors by status; any other status is an `api_error` (an overload is told by the upstream's 529). */
const TYPE_OF_STATUS = new Map<number, string>([
  ...Object.entries(STATUS_OF_TYPE).filter(([, status]) => status < 500).map(([type, status]): [number, string] => [status, type]),
  [405, "invalid_request_error"],
  [422, "invalid_request_error"],
]);

/** The status an Anthropic error type comes with (an `error` event names only its type); 500 when unknown. */
const statusOfType = (type: unknown): number => (typeof type === "string" && Object.hasOwn(STATUS_OF_TYPE, type) ? STATUS_OF_TYPE[type]! : 500);

/** The Anthropic error type for a failure: an Anthropic upstream's own as it sent it, else by status. */
export function anthropicType(error: GatewayError): string {
  if (error.anthropicType) return error.anthropicType;
  if (error.upstreamStatus === 529) return "overloaded_error";
  return TYPE_OF_STATUS.get(error.status) ?? "api_error";
}

/** A context overflow in the words Claude Code acts on: "prompt is too long". */
export function overflowMessage({ limit, tokens }: ContextOverflow): string {
  if (limit !== undefined && tokens !== undefined) return `prompt is too long: ${tokens} tokens > ${limit} maximum`;
  return `prompt is too long for the model's context window${limit === undefined ? "" : ` of ${limit} tokens`}`;
}

/** Anthropic's error body; the details (the upstream's words, when there are some) shown only when debugging. */
export function anthropicErrorBody(error: GatewayError, debug = false) {
  if (error.overflow) return { type: "error", error: { type: "invalid_request_error", message: overflowMessage(error.overflow) } };
  const details = debug && error.upstream ? error.upstream : error.details;
  return { type: "error", error: { type: anthropicType(error), message: details && debug ? `${error.message} (${details})` : error.message } };
}

/**
 * An Anthropic error reply. For a client of another dialect it is mapped as any upstream's is; for
 * an Anthropic client (`verbatim`) it keeps Anthropic's status, type and message (Claude Code acts on
 * them: `overloaded_error`, `permission_error`), but for 401: that is about parley's key, not the client's.
 */
export function anthropicError(up: Upstream, status: number, text: string, retryAfter: string | null, verbatim: boolean): GatewayError {
  const mapped = upstreamErrorText(up, status, text, retryAfter);
  if (!verbatim || mapped.overflow || status === 401) return mapped;
  const error = errorObject(text);
  return new GatewayError(status, mapped.type, stringOr(error?.message) ?? mapped.upstream ?? mapped.message, {
    upstream: mapped.upstream, upstreamStatus: status, retryable: mapped.retryable, retryAfter: mapped.retryAfter, headers: mapped.headers,
    ...(stringOr(error?.type) ? { anthropicType: stringOr(error?.type) } : {}),
  });
}

/** An `error` event at a stream's start (Anthropic sends overloads so, after a 200): as its status would have been. */
export function streamError(up: Upstream, data: unknown, verbatim: boolean): GatewayError {
  const error = isObject(data) && isObject(data.error) ? data.error : {};
  return anthropicError(up, statusOfType(error.type), JSON.stringify({ error }), null, verbatim);
}

function errorObject(text: string): Record<string, unknown> | undefined {
  try {
    const body = JSON.parse(text);
    return isObject(body) && isObject(body.error) ? body.error : undefined;
  } catch {
    return undefined;
  }
}
