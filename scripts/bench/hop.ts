/** The reference hop: a bare Bun.serve that forwards the request body with fetch. The cost any Bun proxy must pay. */
const upstream = process.env.UPSTREAM!;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 0),
  idleTimeout: 0,
  fetch(request) {
    const url = new URL(request.url);
    return fetch(`${upstream}${url.pathname}`, { method: request.method, headers: request.headers, body: request.body });
  },
});
console.log(`listening ${server.port}`);
