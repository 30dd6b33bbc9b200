import { Elysia } from "elysia";
import { errorBody, GatewayError, invalidRequest, notFound, type ErrorDialect } from "../errors.ts";
import { errorDialect } from "./dialects.ts";
import type { Logger } from "../log.ts";
import type { AccessEntry } from "./access-log.ts";

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
 * A request's log state rides on its `set` (Elysia's per-request response settings): WeakMaps keyed
 * by Request cost measurably more per request.
 */
const LOG = Symbol("parley.log");
type LogState = { at: number; start: number; model?: string; provider?: string; upstream_ms?: number };
type Noted = { [LOG]?: LogState };

/** Adds fields (model, provider, upstream timing) to a request's log line. Never secrets or content. */
export function note(set: object, fields: Omit<LogState, "at" | "start">): void {
  const state = (set as Noted)[LOG];
  if (state) Object.assign(state, fields);
}

/**
 * The app's edge: every request gets an id; every failure, Elysia's own included, becomes the
 * contract's envelope; every request gets one log line once its handler or error handler is done
 * (for a stream, when it starts). Hooks that run after the response would make Elysia tee streams.
 */
export function edge(options: EdgeOptions) {
  const { debug, log, accessLog } = options;
  const finish = (request: Request, set: { headers: unknown }, status: number) => {
    const state = (set as Noted)[LOG];
    if (!accessLog || !state) return;
    const { at, start, model, provider, upstream_ms } = state;
    accessLog({ at, method: request.method, url: request.url, status, ms: performance.now() - start, id: (set.headers as Record<string, string>)[REQUEST_ID]!, model, provider, upstream_ms });
  };

  return new Elysia({ name: "parley/edge" })
    .onRequest(({ set, request }) => {
      set.headers[REQUEST_ID] = request.headers.get(REQUEST_ID)?.slice(0, 128) || crypto.randomUUID();
      if (accessLog) (set as Noted)[LOG] = { at: Date.now(), start: performance.now() };
    })
    .onAfterHandle({ as: "global" }, ({ request, set, responseValue }) => {
      finish(request, set, responseValue instanceof Response ? responseValue.status : typeof set.status === "number" ? set.status : 200);
    })
    .onError({ as: "global" }, ({ code, error, set, request }) => {
      const headers = set.headers as Record<string, string>;
      const response = respond();
      set.status = response.status;
      finish(request, set, response.status);
      return response;

      function respond(): Response {
        // The client went away mid-request: nobody is left to answer, and it is not a bug.
        if (request.signal.aborted) return new Response(null, { status: 499, headers });
        const known = toGatewayError(code, error, request, options.isKnownPath);
        if (known) return errorResponse(known, debug, headers, errorDialect(request));
        log.error(`request ${headers[REQUEST_ID]} failed:`, error);
        const bug = new GatewayError(500, "internal_server_error", `Internal error; quote request id ${headers[REQUEST_ID]} when reporting it.`);
        return errorResponse(bug, debug, headers, errorDialect(request));
      }
    });
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
      const path = new URL(request.url).pathname;
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
