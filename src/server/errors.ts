import { Elysia } from "elysia";
import { envelope, GatewayError, invalidRequest, notFound } from "../errors.ts";
import type { Logger } from "../log.ts";

export const REQUEST_ID = "x-request-id";

/** JSON response in the contract's envelope, with the error's own headers. */
export function errorResponse(error: GatewayError, debug: boolean, headers: Record<string, string> = {}): Response {
  return Response.json(envelope(error, debug), { status: error.status, headers: { ...headers, ...error.headers } });
}

/**
 * Gives every request an id and turns every failure, Elysia's own included, into the
 * contract's envelope. `isKnownPath` tells a wrong method (405) from an unknown route (404).
 */
export function errorHandling(options: { debug: boolean; log: Logger; isKnownPath: (path: string) => boolean }) {
  const { debug, log } = options;
  return new Elysia({ name: "parley/errors" })
    .onRequest(({ set, request }) => {
      set.headers[REQUEST_ID] = request.headers.get(REQUEST_ID)?.slice(0, 128) || crypto.randomUUID();
    })
    .onError({ as: "global" }, ({ code, error, set, request }) => {
      const headers = set.headers as Record<string, string>;
      const known = toGatewayError(code, error, request, options.isKnownPath);
      if (known) {
        set.status = known.status;
        return errorResponse(known, debug, headers);
      }
      log.error(`request ${headers[REQUEST_ID]} failed:`, error);
      set.status = 500;
      const bug = new GatewayError(500, "internal_server_error", `Internal error; quote request id ${headers[REQUEST_ID]} when reporting it.`);
      return errorResponse(bug, debug, headers);
    });
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
