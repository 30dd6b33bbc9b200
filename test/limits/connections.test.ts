import { afterAll, describe, expect, test } from "bun:test";
import type { Socket } from "bun";
import { TEST_KEY, testApp } from "../lib/app.ts";
import { startCli, userDir } from "../lib/cli.ts";

/** Contract 25: idle connections are closed, bodies that stop arriving are cut, connections are capped. */

/** Waits for a condition with a generous deadline, never a fixed sleep. */
async function until(ok: () => boolean, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await Bun.sleep(20);
  }
}

describe("a served parley", async () => {
  const user = userDir();
  const server = await startCli([], { cwd: user.dir, env: { ...user.env, API_KEY: TEST_KEY, IDLE_TIMEOUT_S: "1", MAX_CONNECTIONS: "3" } });
  afterAll(() => server.stop());
  const { hostname, port } = new URL(server.url);

  test("1,000 idle connections do not keep /health from answering, and are closed after IDLE_TIMEOUT_S", async () => {
    let closed = 0;
    const sockets: Socket[] = [];
    for (let i = 0; i < 1000; i++) sockets.push(await Bun.connect({ hostname, port: Number(port), socket: { data() {}, close() { closed++; } } }));
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    await until(() => closed === 1000);
  }, 60_000);

  test("a Host header of 1 to 3 characters still reaches /health", async () => {
    for (const host of ["a", "ab", "abc"]) {
      let reply = "";
      const socket = await Bun.connect({ hostname, port: Number(port), socket: { data(_s, data) { reply += data.toString(); } } });
      socket.write(`GET /health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      await until(() => reply.includes("\r\n\r\n"));
      expect([host, reply.split("\r\n")[0]]).toEqual([host, "HTTP/1.1 200 OK"]);
    }
  });

  test("more than 20 wrong or missing keys from one address in 60 s get 429; a valid key is never throttled", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) {
      const response = await fetch(`${server.url}/v1/models`, { headers: i % 2 ? { authorization: `Bearer sk-wrong-guess-${i}-000000` } : {} });
      statuses.push(response.status);
      if (response.status === 429) expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses.slice(20)).toEqual([429, 429]);
    // X-Forwarded-For is the client's to write: it changes nothing.
    expect((await fetch(`${server.url}/v1/models`, { headers: { "x-forwarded-for": "203.0.113.9" } })).status).toBe(429);
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).status).toBe(200);
  });

  test("a request beyond MAX_CONNECTIONS gets 503 at once with Connection: close", async () => {
    // Three requests whose bodies never finish are held.
    const held: Socket[] = [];
    for (let i = 0; i < 3; i++) {
      const socket = await Bun.connect({ hostname, port: Number(port), socket: { data() {} } });
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
      held.push(socket);
    }
    // Once the server holds all three, the next request is refused.
    let response = await fetch(`${server.url}/health`);
    const deadline = Date.now() + 30_000;
    while (response.status !== 503 && Date.now() < deadline) response = await fetch(`${server.url}/health`);
    expect(response.status).toBe(503);
    expect(response.headers.get("connection")).toBe("close");
    expect((await response.json()).error.message).toContain("MAX_CONNECTIONS");
    for (const socket of held) socket.end();
    // Once they are gone, requests are served again.
    let again = await fetch(`${server.url}/health`);
    while (again.status !== 200 && Date.now() < deadline) again = await fetch(`${server.url}/health`);
    expect(again.status).toBe(200);
  }, 60_000);
});

test("a body that stops arriving gets 408 after BODY_TIMEOUT_S", async () => {
  const { app } = testApp({ BODY_TIMEOUT_S: "1" });
  const stalled = () => new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
  for (const headers of [{ "transfer-encoding": "chunked" }, { "content-length": "100" }] as Record<string, string>[]) {
    const response = await app.handle(new Request("http://localhost/v1/chat/completions", { method: "POST", body: stalled(), headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", ...headers } }));
    expect(response.status).toBe(408);
    expect(response.headers.get("connection")).toBe("close");
    expect((await response.json()).error.type).toBe("invalid_request_error");
  }
});

test("an upload that stops arriving gets 408 too", async () => {
  const { app } = testApp({ BODY_TIMEOUT_S: "1" });
  const boundary = "parley-limits";
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nsome text`;
  let sent = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return new Promise(() => {});
      sent = true;
      controller.enqueue(new TextEncoder().encode(head));
    },
  });
  const response = await app.handle(new Request("http://localhost/v1/files", { method: "POST", body, headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": "100000" } }));
  expect(response.status).toBe(408);
});

test("a large body that keeps arriving is not cut: each BODY_MIN_RATE bytes earn a second", async () => {
  const { app } = testApp({ BODY_TIMEOUT_S: "1", BODY_MIN_RATE: "65536" });
  const text = JSON.stringify({ model: "mock", messages: [{ role: "user", content: "x".repeat(5 * 65536) }] });
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (at >= bytes.length) return controller.close();
      // 64 KiB every 0.6 s: slower than the base allowance in total, faster than the rate.
      if (at > 0) await Bun.sleep(600);
      controller.enqueue(bytes.slice(at, (at += 65536)));
    },
  });
  const response = await app.handle(new Request("http://localhost/v1/chat/completions", { method: "POST", body, headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" } }));
  expect(response.status).toBe(200);
});
