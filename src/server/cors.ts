import { Elysia } from "elysia";

const METHODS = "GET, POST, DELETE, OPTIONS";
const MAX_AGE = "600";

/**
 * CORS for browser clients. Headers go only on requests that carry an Origin, so the SDKs, IDE
 * tools and scripts that make most calls pay nothing for them (@elysiajs/cors writes five headers
 * on every response). A preflight is answered here, before routing.
 */
export function cors(origins: string[] | "*", exposed: string[]) {
  const expose = exposed.join(", ");
  const allowed = (origin: string) => origins === "*" || origins.includes(origin);
  return new Elysia({ name: "parley/cors" }).onRequest(({ request, set }) => {
    const origin = request.headers.get("origin");
    if (!origin) return;
    set.headers.vary = "Origin";
    if (!allowed(origin)) return;
    set.headers["access-control-allow-origin"] = origin;
    const preflight = request.method === "OPTIONS" && request.headers.get("access-control-request-method");
    if (!preflight) {
      set.headers["access-control-expose-headers"] = expose;
      return;
    }
    return new Response(null, {
      status: 204,
      headers: {
        ...(set.headers as Record<string, string>),
        "access-control-allow-methods": METHODS,
        "access-control-allow-headers": request.headers.get("access-control-request-headers") ?? "authorization, content-type",
        "access-control-max-age": MAX_AGE,
      },
    });
  });
}
