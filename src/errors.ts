export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "validation_error"
  | "rate_limit_error"
  | "internal_server_error"
  | "service_unavailable_error";

/**
 * A prompt too long for the model's context, whatever words the upstream used: the token counts
 * when it gave them. Clients compact and retry on their vendor's own wording only (contract 3).
 */
export interface ContextOverflow {
  /** The model's context, in tokens. */
  limit?: number;
  /** The prompt's size, in tokens. */
  tokens?: number;
}

export interface ErrorOptions {
  details?: string;
  /** Text from an upstream provider: shown to clients only when DEBUG=true. */
  upstream?: string;
  /** The upstream's own HTTP status, when an upstream answered with an error. */
  upstreamStatus?: number;
  /** Another call to the upstream may succeed (contract 10): retried before the first byte, then fallbacks. */
  retryable?: boolean;
  /** Seconds the upstream asked us to wait before trying again. */
  retryAfter?: number;
  headers?: Record<string, string>;
  overflow?: ContextOverflow;
  /** An Anthropic upstream's own error type (`overloaded_error`, …): an Anthropic client gets it as sent. */
  anthropicType?: string;
}

/** Every failure a client can see. Rendered into the envelope only at the edge (server/errors.ts). */
export class GatewayError extends Error {
  readonly details?: string;
  readonly upstream?: string;
  readonly upstreamStatus?: number;
  readonly retryable: boolean;
  readonly retryAfter?: number;
  readonly headers: Record<string, string>;
  readonly overflow?: ContextOverflow;
  readonly anthropicType?: string;

  constructor(
    readonly status: number,
    readonly type: ErrorType,
    message: string,
    options: ErrorOptions = {},
  ) {
    super(message);
    this.details = options.details;
    this.upstream = options.upstream;
    this.upstreamStatus = options.upstreamStatus;
    this.retryable = options.retryable ?? false;
    this.retryAfter = options.retryAfter;
    this.headers = options.headers ?? {};
    this.overflow = options.overflow;
    this.anthropicType = options.anthropicType;
  }
}

export const invalidRequest = (message: string, details?: string) =>
  new GatewayError(400, "invalid_request_error", message, { details });

export const validationError = (field: string, rule: string) =>
  new GatewayError(422, "validation_error", `Invalid value for '${field}'.`, { details: `${field}: ${rule}` });

export const notFound = (message: string) => new GatewayError(404, "not_found_error", message);

export const unavailable = (message: string, options?: ErrorOptions) =>
  new GatewayError(503, "service_unavailable_error", message, options);

export interface ErrorEnvelope {
  error: { type: ErrorType; message: string; details?: string };
}

export function envelope(error: GatewayError, debug = false): ErrorEnvelope {
  const details = debug && error.upstream ? error.upstream : error.details;
  return { error: { type: error.type, message: error.message, ...(details ? { details } : {}) } };
}

/** Whose error envelope a caller expects (contract 9): each endpoint speaks its vendor's dialect. */
export type ErrorDialect = "parley" | "anthropic" | "openai";

/** Anthropic's error types by status; parley's own 502/503/504 are its `api_error`. */
function anthropicType(error: GatewayError): string {
  if (error.anthropicType) return error.anthropicType;
  if (error.upstreamStatus === 529) return "overloaded_error";
  switch (error.status) {
    case 400:
    case 405:
    case 422:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    default:
      return "api_error";
  }
}

/** OpenAI's `type` and `code` as api.openai.com sends them: every 4xx an `invalid_request_error`, 5xx a `server_error`. */
function openaiType(error: GatewayError): { type: string; code: string | null } {
  if (error.status === 401) return { type: "invalid_request_error", code: "invalid_api_key" };
  if (error.status === 429) return { type: "requests", code: "rate_limit_exceeded" };
  if (error.status >= 500) return { type: "server_error", code: null };
  return { type: "invalid_request_error", code: null };
}

/** The error body in the caller's dialect. */
export function errorBody(error: GatewayError, dialect: ErrorDialect, debug = false): unknown {
  if (error.overflow) return overflowBody(error, error.overflow, dialect, debug);
  const parley = envelope(error, debug);
  switch (dialect) {
    case "parley":
      return parley;
    case "anthropic": {
      const { message, details } = parley.error;
      return { type: "error", error: { type: anthropicType(error), message: details && debug ? `${message} (${details})` : message } };
    }
    case "openai": {
      const param = /^([\w.[\]]+):/.exec(error.details ?? "")?.[1] ?? null;
      const { message, details } = parley.error;
      // OpenAI's clients show only the message: the rule that failed goes in it.
      const { type, code } = openaiType(error);
      return { error: { message: details ? `${message} (${details})` : message, type, param, code } };
    }
  }
}

/** A context overflow in the words each vendor's clients act on: OpenAI's code and sentence, Anthropic's "prompt is too long". */
function overflowBody(error: GatewayError, { limit, tokens }: ContextOverflow, dialect: ErrorDialect, debug: boolean): unknown {
  if (dialect === "anthropic") {
    const message = limit !== undefined && tokens !== undefined ? `prompt is too long: ${tokens} tokens > ${limit} maximum` : `prompt is too long for the model's context window${limit === undefined ? "" : ` of ${limit} tokens`}`;
    return { type: "error", error: { type: "invalid_request_error", message } };
  }
  const message = limit !== undefined && tokens !== undefined
    ? `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`
    : `Your input exceeds the context window of this model${limit === undefined ? "" : ` (${limit} tokens)`}. Please reduce the length of the messages.`;
  const code = "context_length_exceeded";
  if (dialect === "openai") return { error: { message, type: "invalid_request_error", param: null, code } };
  const details = debug ? error.upstream : undefined;
  return { error: { type: error.type, message, code, ...(details ? { details } : {}) } };
}
