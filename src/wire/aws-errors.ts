import type { GatewayError } from "../errors.ts";
import type { SseEvent } from "../ir.ts";
import { isObject } from "../lib/read.ts";
import { credentialsRefused, fromUpstreamStatus, type Upstream } from "./upstream-errors.ts";

/**
 * Bedrock Runtime's exceptions, both ways: read from an upstream (named in `x-amzn-ErrorType` over
 * HTTP, in `:exception-type` in a stream, camelCase there), and written for a Bedrock client (the
 * AWS SDKs raise each as its typed exception). One table: each exception's status as parley reads
 * it, whether another try may help, and the gateway statuses parley answers with it.
 */
interface AwsException {
  /** The status an upstream's exception becomes: an upstream's model timing out is a gateway timeout to parley's client. */
  read: number;
  /** Worth another try (contract 10); the rest are final whatever their status. */
  retry?: true;
  /** Written for these gateway statuses, with the status Bedrock gives it. */
  write?: { for: number[]; status: number };
  /** One of the exceptions a response stream may end with (ConverseStream, InvokeModelWithResponseStream). */
  stream?: true;
  /** A refusal of parley's own credentials: a 502 naming what to check, not the client's business. */
  credentials?: true;
}

const EXCEPTIONS: Record<string, AwsException> = {
  ValidationException: { read: 400, write: { for: [400, 405, 413, 422], status: 400 }, stream: true },
  AccessDeniedException: { read: 403, write: { for: [401, 403], status: 403 } },
  UnrecognizedClientException: { read: 403, credentials: true },
  ExpiredTokenException: { read: 403, credentials: true },
  InvalidSignatureException: { read: 403, credentials: true },
  IncompleteSignatureException: { read: 403, credentials: true },
  MissingAuthenticationTokenException: { read: 403, credentials: true },
  ResourceNotFoundException: { read: 404, write: { for: [404], status: 404 } },
  ModelTimeoutException: { read: 504, retry: true, write: { for: [408, 504], status: 408 }, stream: true },
  ThrottlingException: { read: 429, retry: true, write: { for: [429], status: 429 }, stream: true },
  ServiceQuotaExceededException: { read: 429 },
  InternalServerException: { read: 503, retry: true, write: { for: [500], status: 500 } },
  ServiceUnavailableException: { read: 503, retry: true, write: { for: [503], status: 503 }, stream: true },
  ModelNotReadyException: { read: 503, retry: true },
  ModelErrorException: { read: 503 },
  ModelStreamErrorException: { read: 503, stream: true },
};

const WRITTEN = new Map<number, string>();
for (const [name, { write }] of Object.entries(EXCEPTIONS)) for (const status of write?.for ?? []) WRITTEN.set(status, name);

/**
 * An upstream's exception, by the name AWS gives it: its status and whether to retry; undefined when
 * unknown. The name as a header writes it ("ValidationException:http://internal..." or
 * "com.amazon.bedrock#ValidationException") or a stream does ("throttlingException").
 */
function awsException(raw: string): { status: number; retryable: boolean; credentials: boolean } | undefined {
  const name = raw.split(":")[0]!.split("#").at(-1)!;
  const type = name.charAt(0).toUpperCase() + name.slice(1);
  const known = Object.hasOwn(EXCEPTIONS, type) ? EXCEPTIONS[type]! : undefined;
  return known && { status: known.read, retryable: known.retry === true, credentials: known.credentials === true };
}

/** The exception a gateway status is answered with over HTTP, and the status Bedrock gives it. */
export function exceptionOf(status: number): [name: string, status: number] {
  const name = WRITTEN.get(status) ?? (status >= 500 ? "ServiceUnavailableException" : "ValidationException");
  return [name, EXCEPTIONS[name]!.write!.status];
}

/** The event a Bedrock stream fails with, written as an exception frame: the SDKs raise it as the exception it names. */
export function exceptionEvent(error: GatewayError): SseEvent {
  return { event: "exception", data: { type: streamExceptionOf(error.status), message: error.message } };
}

/** The exception a stream fails with for a gateway status, as the stream names it (camelCase): only those a stream declares. */
function streamExceptionOf(status: number): string {
  const written = WRITTEN.get(status);
  const name = written && EXCEPTIONS[written]!.stream ? written : status >= 500 ? "ModelStreamErrorException" : "ValidationException";
  return name.charAt(0).toLowerCase() + name.slice(1);
}

/** An upstream's exception as the client sees it; one parley does not know keeps the status it came with. */
export function awsError(up: Upstream, name: string, status: number | undefined, message: string, retryAfter?: string | null): GatewayError {
  const known = awsException(name);
  if (known?.credentials) return credentialsRefused(up, { upstream: message, upstreamStatus: status ?? known.status });
  return fromUpstreamStatus(up, known?.status ?? status ?? 503, message, retryAfter, known?.retryable);
}

/** A Bedrock Runtime reply that is not ok: the exception named in `x-amzn-ErrorType` (or the body's `__type`), `{"message"}` its words. */
export async function httpError(up: Upstream, response: Response): Promise<GatewayError> {
  const text = await response.text().catch(() => "");
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text);
    if (isObject(parsed)) body = parsed;
  } catch {
    // not JSON: the text itself is the message
  }
  const name = response.headers.get("x-amzn-errortype") ?? String(body.__type ?? "");
  const message = body.message ?? body.Message;
  return awsError(up, name, response.status, typeof message === "string" ? message : text.slice(0, 500), response.headers.get("retry-after"));
}
