import { Elysia } from "elysia";
import { GatewayError, invalidRequest, notFound, type ErrorDialect } from "../errors.ts";
import { errorBody } from "../wire/error-body.ts";
import { errorDialect } from "./dialects.ts";
import type { Logger } from "../log.ts";
import type { AccessEntry } from "./access-log.ts";
import { RequestLog } from "./request-log.ts";

export const REQUEST_ID = "x-request-id";

export interface EdgeOptions {
  debug: boolean;
  log: Logger;
  /** Tells a wrong method (405) from an unknown route (404). */
  isKnownPath: (path: string) => boolean;
  /** Where request log entries go; none below LOG_LEVEL=info. */
  accessLog?: (entry: AccessEntry) => void;
}

/**
 * A request's log line and over-limit note ride on its `set` (Elysia's per-request response
 * settings): WeakMaps keyed by Request cost measurably more per request.
 */
const LOG = Symbol("parley.log");
const OVER_LIMIT = Symbol("parley.overLimit");
type Noted = { [LOG]?: RequestLog; [OVER_LIMIT]?: number };

/**
 * The request body limit, enforced by parley so that every over-limit body, of any size and sent
 * either way, gets the envelope (Bun's own limit answers with its own 413 page). A declared length
 * over the limit is refused before a byte is read; a chunked body is counted as it is read, and the
 * reader fails once it goes over. Bytes the client still sends are drained by Bun, not buffered.
 */
export function bodyLimit(max: number) {
  return (context: { request: Request; set: object }) => {
    const { request, set } = context;
    const length = request.headers.get("content-length");
    if (length !== null) {
      if (Number(length) > max) throw tooLarge(max);
      return;
    }
    if (!request.headers.has("transfer-encoding") || !request.body) return;
    let seen = 0;
    const counted = request.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen <= max) return controller.enqueue(chunk);
        (set as Noted)[OVER_LIMIT] = max;
        controller.error(tooLarge(max));
      },
    }));
    context.request = new Request(request, { body: counted, duplex: "half" } as RequestInit);
  };
}

export const tooLarge = (max: number) =>
  new GatewayError(413, "invalid_request_error", `The request body is larger than the limit of ${max} bytes (MAX_UPLOAD_BYTES and 1 MiB for multipart framing).`);

/**
 * The app's edge: every request gets an id; every failure, Elysia's own included, becomes the
 * contract's envelope; every request gets one log line once its handler or error handler is done
 * (for a stream, when it starts). Hooks that run after the response would make Elysia tee streams.
 */
export function edge(options: EdgeOptions) {
  const { debug, log, accessLog } = options;
  const finish = (set: object, status: number) => (set as Noted)[LOG]?.finish(status);

  return new Elysia({ name: "parley/edge" })
    .onRequest(({ set, request }) => {
      const id = requestId(request);
      set.headers[REQUEST_ID] = id;
      if (accessLog) (set as Noted)[LOG] = new RequestLog(accessLog, request.method, request.url, id);
      // Not a proxy: CONNECT's target is a host:port, and the client would wait for a tunnel.
      if (request.method === "CONNECT") throw new GatewayError(405, "invalid_request_error", "CONNECT is not supported: parley is not a proxy.", { headers: { connection: "close" } });
    })
    .onAfterHandle({ as: "global" }, ({ set, responseValue }) => {
      finish(set, responseValue instanceof Response ? responseValue.status : typeof set.status === "number" ? set.status : 200);
    })
    .onError({ as: "global" }, ({ code, error, set, request }) => {
      const headers = set.headers as Record<string, string>;
      const response = respond();
      set.status = response.status;
      finish(set, response.status);
      return response;

      function respond(): Response {
        // Elysia's own body parser hides the reason a read failed behind its PARSE error.
        const over = (set as Noted)[OVER_LIMIT];
        const known = over !== undefined ? tooLarge(over) : toGatewayError(code, error, request, options.isKnownPath);
        return failure(known ?? error, request, headers, errorDialect(request), { debug, log });
      }
    });
}

/** The client's request id (up to 128 characters), else a new one. */
export function requestId(request: Request): string {
  return request.headers.get(REQUEST_ID)?.slice(0, 128) || crypto.randomUUID();
}

/**
 * A failed request's answer in the caller's dialect: its own status for a GatewayError, 499 (and
 * no body) when the client went away, else a 500 quoting the request id, with the error logged.
 */
export function failure(error: unknown, request: Request, headers: Record<string, string>, dialect: ErrorDialect, { debug, log }: { debug: boolean; log: Logger }): Response {
  if (request.signal.aborted) return new Response(null, { status: 499, headers });
  if (error instanceof GatewayError) return errorResponse(error, debug, headers, dialect);
  log.error(`request ${headers[REQUEST_ID]} failed:`, error);
  const bug = new GatewayError(500, "internal_server_error", `Internal error; quote request id ${headers[REQUEST_ID]} when reporting it.`);
  return errorResponse(bug, debug, headers, dialect);
}

/** JSON response in the contract's envelope, with the error's own headers. */
function errorResponse(error: GatewayError, debug: boolean, headers: Record<string, string>, dialect: ErrorDialect): Response {
  // Anthropic's clients quote `request-id`.
  const own: Record<string, string> = dialect === "anthropic" ? { "request-id": headers[REQUEST_ID]! } : {};
  return Response.json(errorBody(error, dialect, debug), { status: error.status, headers: { ...headers, ...own, ...error.headers } });
}

function toGatewayError(code: string | number, error: unknown, request: Request, isKnownPath: (path: string) => boolean) {
  if (error instanceof GatewayError) return error;
  switch (code) {
    case "NOT_FOUND": {
      const path = pathOf(request.url);
      if (isKnownPath(path)) return new GatewayError(405, "invalid_request_error", `Method ${request.method} is not allowed on ${path}.`);
      return notFound(`No route ${request.method} ${path}.`);
    }
    case "PARSE":
      return invalidRequest("The request body could not be parsed.", error instanceof Error ? error.message : undefined);
    case "VALIDATION":
      return new GatewayError(422, "validation_error", "The request failed validation.", { details: validationSummary(error) });
    case "INVALID_COOKIE_SIGNATURE":
    case "INVALID_FILE_TYPE":
      return invalidRequest(error instanceof Error ? error.message : "Invalid request.");
  }
  if (typeof code === "number" && code >= 400 && code < 500) return invalidRequest(`Request rejected with status ${code}.`);
  return undefined;
}

function validationSummary(error: unknown): string | undefined {
  const all = (error as { all?: { path?: string; summary?: string; message?: string }[] }).all;
  if (!Array.isArray(all) || all.length === 0) return undefined;
  return all.map((e) => `${(e.path ?? "").replace(/^\//, "").replaceAll("/", ".") || "body"}: ${e.summary ?? e.message}`).join("; ");
}

/** The URL's path, or the whole target when it is not a URL (CONNECT's host:port). */
function pathOf(url: string): string {
  return URL.canParse(url) ? new URL(url).pathname : url;
}
