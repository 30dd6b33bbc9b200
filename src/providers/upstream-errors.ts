import { GatewayError } from "../errors.ts";

/** How an upstream names itself in errors, and what a user changes when it refuses parley. */
export interface Upstream {
  /** "OpenAI upstream", "AWS Bedrock". */
  label: string;
  /** Where it was called, for "could not be reached". */
  url: string;
  /** The settings that hold parley's credentials for it. */
  credentials: string;
}

const DEFAULT_RETRY_SECONDS = 1;
/** Upstream statuses worth another try (contract 10); 529 is Anthropic's "overloaded". */
const RETRYABLE = new Set([408, 429, 500, 502, 503, 504, 529]);

/** The contract's mapping of an upstream HTTP status onto what the client sees. */
export function fromUpstreamStatus(up: Upstream, status: number, upstream: string, retryAfter?: string | null, retryable = RETRYABLE.has(status)): GatewayError {
  const common = { upstream, upstreamStatus: status, retryable, retryAfter: retryAfterSeconds(retryAfter) };
  if (status === 429) {
    const seconds = common.retryAfter ?? DEFAULT_RETRY_SECONDS;
    return new GatewayError(429, "rate_limit_error", `${up.label} is rate limiting requests.`, {
      ...common,
      details: `retry after ${seconds} seconds`,
      headers: { "retry-after": String(seconds) },
    });
  }
  if (status === 401 || status === 403) {
    return new GatewayError(502, "service_unavailable_error", `${up.label} rejected parley's credentials: check ${up.credentials}.`, common);
  }
  if (status === 404) return new GatewayError(404, "not_found_error", `${up.label}: ${upstream || "model or resource not found"}`, common);
  if (status === 408 || status === 504) return new GatewayError(504, "service_unavailable_error", `${up.label} timed out.`, common);
  if (status >= 400 && status < 500) return new GatewayError(status, "invalid_request_error", `${up.label} rejected the request: ${upstream}`, common);
  return new GatewayError(503, "service_unavailable_error", `${up.label} is unavailable (status ${status}).`, common);
}

export const unreachable = (up: Upstream, cause: string) =>
  new GatewayError(503, "service_unavailable_error", `${up.label} could not be reached at ${up.url}: ${cause}`, { upstream: cause, retryable: true });

/**
 * A failed fetch or body read. An abort (the client went away) passes through as it is; Bun's idle
 * timeout means the upstream went silent; a failure once the reply had started is a dropped
 * connection, not an unreachable upstream.
 */
export function fetchError(up: Upstream, error: unknown, midway = false): Error {
  const name = (error as { name?: string } | null)?.name;
  if (error instanceof GatewayError || name === "AbortError") return error as Error;
  const cause = error instanceof Error ? error.message : String(error);
  if (name === "TimeoutError") {
    return new GatewayError(504, "service_unavailable_error", `${up.label} went silent for longer than UPSTREAM_TIMEOUT_MS.`, { upstream: cause, retryable: true });
  }
  if (midway) return new GatewayError(503, "service_unavailable_error", `${up.label} dropped the connection in the middle of its reply.`, { upstream: cause, retryable: true });
  return unreachable(up, cause);
}

export function fetchFailed(up: Upstream, error: unknown, midway = false): never {
  throw fetchError(up, error, midway);
}

/** A reply that is not what the upstream's API promises: the upstream failing, never a 500. */
export const badShape = (up: Upstream, what: string, sample?: string) =>
  new GatewayError(503, "service_unavailable_error", `${up.label} sent a reply parley cannot read: ${what}.`, { upstream: sample?.slice(0, 500) });

/** An upstream's JSON (a reply, or one event of a stream); anything else is the upstream failing. */
export function parseUpstreamJson(up: Upstream, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw badShape(up, "not JSON", text);
  }
}

/** A whole JSON reply's body. */
export async function readUpstreamJson(up: Upstream, response: Response): Promise<unknown> {
  return parseUpstreamJson(up, await response.text().catch((error) => fetchFailed(up, error, true)));
}

/**
 * A stream that ended without its last event: the reply is not complete, whatever came before.
 * Worth another call when nothing came at all (`empty`).
 */
export const incomplete = (label: string, empty = false) =>
  new GatewayError(503, "service_unavailable_error", `${label}'s stream ended before the reply was complete.`, { retryable: empty });

export const timedOut = (label: string, ms: number) =>
  new GatewayError(504, "service_unavailable_error", `${label} sent nothing within ${ms} ms (UPSTREAM_TIMEOUT_MS).`, { retryable: true });

function retryAfterSeconds(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
