import { GatewayError, type ContextOverflow, type ErrorOptions } from "../errors.ts";
import { boundedChunks } from "../lib/silence.ts";

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

/**
 * The contract's mapping of an upstream HTTP status onto what the client sees. `fields` is the
 * upstream's error object, when it had one: some say how many tokens in fields, not in words.
 */
export function fromUpstreamStatus(up: Upstream, status: number, upstream: string, retryAfter?: string | null, retryable = RETRYABLE.has(status), fields?: Record<string, unknown>): GatewayError {
  const common = { upstream, upstreamStatus: status, retryable, retryAfter: retryAfterSeconds(retryAfter) };
  const overflow = status >= 400 && !NEVER_OVERFLOW.has(status) ? contextOverflow(upstream, fields) : undefined;
  if (overflow) {
    return new GatewayError(400, "invalid_request_error", `${up.label}: the prompt is too long for the model's context.`, { ...common, upstreamStatus: status, retryable: false, overflow });
  }
  if (status === 429) {
    const seconds = common.retryAfter ?? DEFAULT_RETRY_SECONDS;
    return new GatewayError(429, "rate_limit_error", `${up.label} is rate limiting requests.`, {
      ...common,
      details: `retry after ${seconds} seconds`,
      headers: { "retry-after": String(seconds) },
    });
  }
  if (status === 401) return credentialsRefused(up, common);
  // Any other refusal (a model the account may not use, a region, a policy) is the upstream's to explain (contract 26).
  if (status === 403) return new GatewayError(403, "permission_error", upstream || `${up.label} refused the request.`, common);
  if (status === 404) return new GatewayError(404, "not_found_error", `${up.label}: ${upstream || "model or resource not found"}`, common);
  if (status === 408 || status === 504) return new GatewayError(504, "service_unavailable_error", `${up.label} timed out.`, common);
  if (status >= 400 && status < 500) return new GatewayError(status, "invalid_request_error", `${up.label} rejected the request: ${upstream}`, common);
  return new GatewayError(503, "service_unavailable_error", `${up.label} is unavailable (status ${status}).`, common);
}

/** The upstream refused parley's own credentials: about parley's configuration, not the client's request. */
export const credentialsRefused = (up: Upstream, options: ErrorOptions) =>
  new GatewayError(502, "service_unavailable_error", `${up.label} rejected parley's credentials: check ${up.credentials}.`, options);

/** An upstream's error reply: its message and error object, from OpenAI's shape, a bare `{message}` or Ollama's `{error: "…"}`. */
export function upstreamErrorText(up: Upstream, status: number, text: string, retryAfter?: string | null): GatewayError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return fromUpstreamStatus(up, status, text.slice(0, 500), retryAfter);
  }
  const error = (body as { error?: unknown } | null)?.error;
  const fields = error !== null && typeof error === "object" ? (error as Record<string, unknown>) : undefined;
  const message = fields?.message ?? error ?? (body as { message?: unknown } | null)?.message;
  return fromUpstreamStatus(up, status, typeof message === "string" ? message : text.slice(0, 500), retryAfter, undefined, fields);
}

/** Statuses whose body is never about the prompt's length, whatever it says (Bedrock throttles with "Too many tokens"). */
const NEVER_OVERFLOW = new Set([401, 403, 404, 408, 429, 503, 504, 529]);

/** What upstreams say when a prompt is over the model's context (OpenAI, vLLM, llama.cpp, Ollama, Bedrock, Anthropic). */
const OVERFLOW =
  /context[_ ]length[_ ]exceeded|maximum context length|exceeds? the (available context size|context window)|input length exceeds the context length|exceeded max context length|input is too long for requested model|prompt is too long/i;
/** Where the numbers are in those words: the model's context, and the prompt's size. */
const LIMIT = [/maximum context length is (\d+)/i, /available context size \((\d+) tokens\)/i, /tokens > (\d+) maximum/i];
const TOKENS = [/resulted in (\d+) tokens/i, /request has (\d+) input tokens/i, /you requested (\d+) tokens/i, /request \((\d+) tokens\)/i, /prompt is too long: (\d+) tokens/i];
/** The error codes and types that say so without words: OpenAI's, llama.cpp's. */
const OVERFLOW_CODES = new Set(["context_length_exceeded", "exceed_context_size_error"]);

/**
 * A prompt too long for the model, recognised in any upstream's words (one place for all of
 * them), with the token counts when the upstream gave them: llama.cpp puts them in `n_ctx` and
 * `n_prompt_tokens`, the others in their sentence.
 */
export function contextOverflow(message: string, fields?: Record<string, unknown>): ContextOverflow | undefined {
  if (!OVERFLOW.test(message) && !OVERFLOW_CODES.has(String(fields?.code)) && !OVERFLOW_CODES.has(String(fields?.type))) return undefined;
  const limit = count(fields?.n_ctx) ?? first(message, LIMIT);
  const tokens = count(fields?.n_prompt_tokens) ?? first(message, TOKENS);
  // vLLM's "max_tokens is too large" gives the prompt's size, which fits: it is not the overflow.
  return { limit, tokens: tokens !== undefined && limit !== undefined && tokens <= limit ? undefined : tokens };
}

const count = (value: unknown) => (typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined);

function first(message: string, patterns: RegExp[]): number | undefined {
  for (const pattern of patterns) {
    const found = pattern.exec(message);
    if (found) return count(Number(found[1]));
  }
  return undefined;
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

/** A streamed reply's body, with UPSTREAM_TIMEOUT_MS bounding every silence between two chunks (contract 10). */
export const streamedBody = (up: Upstream, response: Response, ms: number) => boundedChunks(response.body!, ms, () => wentSilent(up.label, ms));

const wentSilent = (label: string, ms: number) =>
  new GatewayError(504, "service_unavailable_error", `${label} timed out: it sent nothing for ${ms} ms (UPSTREAM_TIMEOUT_MS).`, { retryable: true });

export const timedOut = (label: string, ms: number) =>
  new GatewayError(504, "service_unavailable_error", `${label} sent nothing within ${ms} ms (UPSTREAM_TIMEOUT_MS).`, { retryable: true });

function retryAfterSeconds(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/**
 * A 4xx in the upstream's own words, for a client of its family: the client wrote the body, it acts
 * on them (Claude Code's recovery matches them, contract 26): a 403 and a 429 (its retry-after kept)
 * included. Not a refusal of parley's credentials (a 502 already: about parley's key, not the
 * client's). A context overflow keeps them only for a client of the upstream's own dialect
 * (`overflow`): a client of another gets its vendor's words for it (Anthropic's "prompt is too long").
 */
export function verbatim(error: unknown, overflow: boolean): unknown {
  if (!(error instanceof GatewayError) || !error.upstream || (error.overflow && !overflow) || error.status < 400 || error.status >= 500) return error;
  return new GatewayError(error.status, error.type, error.upstream, { upstream: error.upstream, upstreamStatus: error.upstreamStatus, retryable: error.retryable, retryAfter: error.retryAfter, headers: error.headers });
}
