const METHODS = "GET, POST, DELETE, OPTIONS";
const MAX_AGE = "600";

/**
 * CORS for browser clients. Headers go only on requests that carry an Origin, so the SDKs, IDE
 * tools and scripts that make most calls pay nothing for them (@elysiajs/cors writes five headers
 * on every response). Adds the headers a request's answer needs to `headers`, and answers a
 * preflight itself.
 */
export function corsHeaders(origins: string[] | "*", exposed: string[]) {
  const expose = exposed.join(", ");
  const allowed = (origin: string) => origins === "*" || origins.includes(origin);
  return (request: Request, headers: Record<string, string>): Response | undefined => {
    const origin = request.headers.get("origin");
    if (!origin) return;
    headers.vary = "Origin";
    if (!allowed(origin)) return;
    headers["access-control-allow-origin"] = origin;
    const preflight = request.method === "OPTIONS" && request.headers.get("access-control-request-method");
    if (!preflight) {
      headers["access-control-expose-headers"] = expose;
      return;
    }
    return new Response(null, {
      status: 204,
      headers: {
        ...headers,
        "access-control-allow-methods": METHODS,
        "access-control-allow-headers": request.headers.get("access-control-request-headers") ?? "authorization, content-type",
        "access-control-max-age": MAX_AGE,
      },
    });
  };
}
