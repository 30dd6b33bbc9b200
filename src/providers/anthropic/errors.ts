import { GatewayError } from "../../errors.ts";
import { isObject, stringOr } from "../../lib/read.ts";
import { statusOfType } from "../../wire/anthropic/errors.ts";
import { upstreamErrorText, type Upstream } from "../../wire/upstream-errors.ts";

/**
 * An Anthropic error reply. For a client of another dialect it is mapped as any upstream's is; for
 * an Anthropic client (`verbatim`) it keeps Anthropic's status, type and message (Claude Code acts on
 * `overloaded_error`), but for 401/403: those are about parley's key, not the client's.
 */
export function anthropicError(up: Upstream, status: number, text: string, retryAfter: string | null, verbatim: boolean): GatewayError {
  const mapped = upstreamErrorText(up, status, text, retryAfter);
  if (!verbatim || mapped.overflow || status === 401 || status === 403) return mapped;
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
