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
export type ErrorDialect = "parley" | "anthropic" | "openai" | "gemini";
