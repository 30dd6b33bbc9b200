/**
 * The reference hop: the cheapest correct proxy Bun can be. It reads the request body whole,
 * forwards it to the same path on UPSTREAM with only the headers an upstream needs (content-type,
 * authorization), and returns the upstream's response as it comes (a stream stays a stream).
 * No parsing, routing, auth, logging or limits: what any Bun gateway must pay at least.
 */
const upstream = process.env.UPSTREAM!;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 0),
  idleTimeout: 0,
  async fetch(request) {
    const url = request.url;
    const path = url.slice(url.indexOf("/", 8));
    const headers: Record<string, string> = {};
    const type = request.headers.get("content-type");
    const auth = request.headers.get("authorization");
    if (type) headers["content-type"] = type;
    if (auth) headers.authorization = auth;
    return fetch(`${upstream}${path}`, { method: request.method, headers, body: await request.arrayBuffer() });
  },
});
// Exit normally on a signal, so `bun --cpu-prof` writes its profile (scripts/bench/profile.ts).
process.on("SIGINT", () => process.exit(0));
console.log(`listening ${server.port}`);
