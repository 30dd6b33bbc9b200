import { Elysia } from "elysia";
import type { Logger } from "../log.ts";
import { REQUEST_ID } from "./errors.ts";

const started = new WeakMap<Request, number>();
const notes = new WeakMap<Request, Record<string, string | number>>();

/** Adds fields (model, provider, upstream timing) to a request's log line. Never secrets or content. */
export function note(request: Request, fields: Record<string, string | number | undefined>): void {
  const current = notes.get(request) ?? {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) current[key] = value;
  notes.set(request, current);
}

/** One line per request: method, path, status, model, provider, duration, request id; `debug` adds upstream timing. */
export function requestLogging(log: Logger, debug: boolean) {
  return new Elysia({ name: "parley/logging" })
    .onRequest(({ request }) => {
      started.set(request, performance.now());
    })
    .onAfterResponse({ as: "global" }, ({ request, set, responseValue }) => {
      const status = responseValue instanceof Response ? responseValue.status : (set.status ?? 200);
      const ms = (performance.now() - (started.get(request) ?? performance.now())).toFixed(1);
      const path = request.url.slice(request.url.indexOf("/", 8)).split("?")[0];
      const { model, provider, upstream_ms } = notes.get(request) ?? {};
      const fields = [model && `model=${model}`, provider && `provider=${provider}`, debug && upstream_ms !== undefined && `upstream_ms=${upstream_ms}`];
      log.info([`${request.method} ${path} ${status} ${ms}ms`, ...fields.filter(Boolean), `id=${(set.headers as Record<string, string>)[REQUEST_ID]}`].join(" "));
    });
}
