import { GatewayError } from "../errors.ts";

const DEFAULT_RETRY_SECONDS = 1;

/** The contract's mapping of an upstream HTTP status onto what the client sees. */
export function fromUpstreamStatus(provider: string, status: number, upstream: string, retryAfter?: string | null): GatewayError {
  if (status === 429) {
    const seconds = retryAfterSeconds(retryAfter);
    return new GatewayError(429, "rate_limit_error", `${provider} is rate limiting requests.`, {
      details: `retry after ${seconds} seconds`,
      upstream,
      headers: { "retry-after": String(seconds) },
      retryable: true,
    });
  }
  if (status === 401 || status === 403) {
    return new GatewayError(502, "service_unavailable_error", `${provider} rejected parley's credentials; check the server's configuration.`, { upstream });
  }
  if (status === 404) return new GatewayError(404, "not_found_error", `${provider}: ${upstream || "model or resource not found"}`, { upstream });
  if (status === 408 || status === 504) return new GatewayError(504, "service_unavailable_error", `${provider} timed out.`, { upstream });
  if (status >= 400 && status < 500) return new GatewayError(status, "invalid_request_error", `${provider} rejected the request: ${upstream}`, { upstream });
  return new GatewayError(503, "service_unavailable_error", `${provider} is unavailable (status ${status}).`, { upstream });
}

export const unreachable = (provider: string, cause: string) =>
  new GatewayError(503, "service_unavailable_error", `${provider} could not be reached.`, { upstream: cause });

/**
 * A failed fetch or body read: an abort (the client went away) passes through as it is; Bun's idle
 * timeout means the upstream went silent; anything else is an upstream that could not be reached.
 */
export function fetchFailed(provider: string, error: unknown): never {
  const name = (error as { name?: string } | null)?.name;
  if (error instanceof GatewayError || name === "AbortError") throw error;
  if (name === "TimeoutError") throw new GatewayError(504, "service_unavailable_error", `${provider} went silent for longer than UPSTREAM_TIMEOUT_MS.`);
  throw unreachable(provider, error instanceof Error ? error.message : String(error));
}

/** An upstream's JSON (a reply, or one event of a stream); anything else is the upstream failing. */
export function parseUpstreamJson(provider: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError(503, "service_unavailable_error", `${provider} sent a reply that is not JSON.`, { upstream: text.slice(0, 500) });
  }
}

/** A whole JSON reply's body. */
export async function readUpstreamJson(provider: string, response: Response): Promise<unknown> {
  return parseUpstreamJson(provider, await response.text().catch((error) => fetchFailed(provider, error)));
}

export const timedOut = (provider: string, ms: number) =>
  new GatewayError(504, "service_unavailable_error", `${provider} sent nothing within ${ms} ms.`);

function retryAfterSeconds(value: string | null | undefined): number {
  if (!value) return DEFAULT_RETRY_SECONDS;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const date = Date.parse(value);
  return Number.isNaN(date) ? DEFAULT_RETRY_SECONDS : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
