import { Elysia } from "elysia";
import type { Logger } from "../log.ts";
import { REQUEST_ID } from "./errors.ts";

const started = new WeakMap<Request, number>();

/** One line per request: method, path, status, duration, request id. Never headers or bodies. */
export function requestLogging(log: Logger) {
  return new Elysia({ name: "parley/logging" })
    .onRequest(({ request }) => {
      started.set(request, performance.now());
    })
    .onAfterResponse({ as: "global" }, ({ request, set, responseValue }) => {
      const status = responseValue instanceof Response ? responseValue.status : (set.status ?? 200);
      const ms = (performance.now() - (started.get(request) ?? performance.now())).toFixed(1);
      const path = request.url.slice(request.url.indexOf("/", 8)).split("?")[0];
      log.info(`${request.method} ${path} ${status} ${ms}ms id=${(set.headers as Record<string, string>)[REQUEST_ID]}`);
    });
}
