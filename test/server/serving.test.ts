import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/lib/db.ts";
import { createRateLimiter } from "../../src/server/rate-limit.ts";
import { testApp, TEST_KEY } from "../lib/app.ts";
import { startCli, userDir } from "../lib/cli.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { freePort } from "../lib/proc.ts";
import { withinOneWindow } from "../lib/redis.ts";

describe("rate limits", () => {
  // Counts start again each minute: no test may straddle two, however slow the machine.
  beforeEach(() => withinOneWindow(10));
  test("every authenticated response carries the headers, counting down", async () => {
    const { call } = testApp({ RATE_LIMIT_RPM: "5" });
    const seen = [];
    for (let i = 0; i < 3; i++) {
      const response = await call("/v1/models");
      seen.push(response.headers.get("x-ratelimit-remaining"));
      expect(response.headers.get("x-ratelimit-limit")).toBe("5");
      const reset = Number(response.headers.get("x-ratelimit-reset"));
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
    }
    expect(seen).toEqual(["4", "3", "2"]);
  });

  test("the limit+1-th request is 429 with Retry-After and details", async () => {
    const { call } = testApp({ RATE_LIMIT_RPM: "3" });
    for (let i = 0; i < 3; i++) expect((await call("/v1/models")).status).toBe(200);
    const response = await call("/v1/models");
    expect(response.status).toBe(429);
    const retry = Number(response.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    const body = await response.json();
    expect(body.error.type).toBe("rate_limit_error");
    expect(body.error.details).toBe(`retry after ${retry} seconds`);
    expect(response.headers.get("x-ratelimit-remaining")).toBe("0");
  });

  test("each key has its own count; RATE_LIMIT_RPM=0 turns limiting off", async () => {
    const { call } = testApp({ RATE_LIMIT_RPM: "1", API_KEYS: "sk-second-key-00000000:models" });
    expect((await call("/v1/models")).status).toBe(200);
    expect((await call("/v1/models")).status).toBe(429);
    expect((await call("/v1/models", { key: "sk-second-key-00000000" })).status).toBe(200);
    const off = testApp({ RATE_LIMIT_RPM: "0" });
    for (let i = 0; i < 5; i++) {
      const response = await off.call("/v1/models");
      expect(response.status).toBe(200);
      expect(response.headers.get("x-ratelimit-limit")).toBeNull();
    }
  });

  test("a busy key is still counted exactly, one request at a time", async () => {
    const { call } = testApp({ RATE_LIMIT_RPM: "1000" });
    const seen: number[] = [];
    for (let i = 0; i < 300; i++) seen.push(Number((await call("/v1/models")).headers.get("x-ratelimit-remaining")));
    expect(seen).toEqual(Array.from({ length: 300 }, (_, i) => 999 - i));
  });

  test("processes sharing the database never let more than the limit through together", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "parley-rate-"));
    const [a, b] = [openDatabase(dataDir), openDatabase(dataDir)];
    const limits = [createRateLimiter(() => a, 200), createRateLimiter(() => b, 200)];
    let allowed = 0;
    for (let i = 0; i < 600; i++) {
      // Uneven traffic: the first process takes two of every three requests.
      if (limits[i % 3 === 2 ? 1 : 0]!("key").allowed) allowed++;
      expect(allowed).toBeLessThanOrEqual(200);
    }
    expect(allowed).toBe(200);
    a.close();
    b.close();
  });

  test("unauthenticated requests are not counted against anyone", async () => {
    const { call } = testApp({ RATE_LIMIT_RPM: "2" });
    for (let i = 0; i < 5; i++) expect((await call("/v1/models", { key: "sk-wrong" })).status).toBe(401);
    expect((await call("/v1/models")).headers.get("x-ratelimit-remaining")).toBe("1");
  });
});

describe("scoped keys", () => {
  const { call } = testApp({ API_KEYS: "sk-reader-key-000000001:files:read,sk-chat-key-0000000001:chat+models" });
  const cases: [string, string, string, number][] = [
    ["sk-reader-key-000000001", "GET", "/v1/files", 200],
    ["sk-reader-key-000000001", "POST", "/v1/files", 403],
    ["sk-reader-key-000000001", "DELETE", "/v1/files/file-AAAAAAAAAAAAAAAAAAAAAAAA", 403],
    ["sk-reader-key-000000001", "POST", "/v1/chat/completions", 403],
    ["sk-reader-key-000000001", "GET", "/v1/models", 403],
    ["sk-chat-key-0000000001", "GET", "/v1/models", 200],
    ["sk-chat-key-0000000001", "GET", "/v1/files", 403],
    [TEST_KEY, "DELETE", "/v1/files/file-AAAAAAAAAAAAAAAAAAAAAAAA", 404],
  ];
  for (const [key, method, path, status] of cases) {
    test(`${key.slice(0, 10)}… ${method} ${path}: ${status}`, async () => {
      const response = await call(path, { method, key });
      expect(response.status).toBe(status);
      if (status === 403) expect((await response.json()).error.type).toBe("permission_error");
    });
  }
});

const upstream = await startFakeOpenAI();
afterAll(() => upstream.stop());

describe("serving as processes", () => {
  test("two worker processes on one port share one rate limit", async () => {
    const user = userDir();
    const port = freePort();
    const server = await startCli(["--workers", "2", "--port", String(port)], { cwd: user.dir, env: { ...user.env, API_KEY: TEST_KEY, RATE_LIMIT_RPM: "12" } });
    try {
      await server.waitFor(/worker 1.*listening on[\s\S]*worker 2.*listening on|worker 2.*listening on[\s\S]*worker 1.*listening on/);
      await withinOneWindow(10);
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) {
        // A fresh connection each time, so the kernel spreads them over both workers.
        const response = await fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { authorization: `Bearer ${TEST_KEY}`, connection: "close" } });
        statuses.push(response.status);
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(12);
      expect(statuses.filter((s) => s === 429)).toHaveLength(8);
      // Request lines are written in batches, a moment after the responses.
      await server.waitFor(/\[worker 1\].*GET \/v1\/models/);
      await server.waitFor(/\[worker 2\].*GET \/v1\/models/);
    } finally {
      await server.stop();
    }
  });

  test("a crashed worker is restarted", async () => {
    const user = userDir();
    const port = freePort();
    const server = await startCli(["--workers", "2", "--port", String(port)], { cwd: user.dir, env: { ...user.env, API_KEY: TEST_KEY } });
    try {
      await server.waitFor(/worker 2.*listening on/);
      for (const pid of processesMatching(`--port ${port} --worker 2`)) process.kill(pid, "SIGKILL");
      await server.waitFor(/worker 2 exited[\s\S]*worker 2\].*listening on/);
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  test("on SIGTERM an in-flight stream completes, new connections are refused, and the process exits 0", async () => {
    const user = userDir();
    const server = await startCli([], { cwd: user.dir, env: { ...user.env, API_KEY: TEST_KEY, ALPHA_API_KEY: "sk-up", ALPHA_BASE_URL: upstream.url } });
    // 2 s of stream: time enough for a busy machine to deliver the SIGTERM while it is still in flight.
    upstream.next({ kind: "stream", chunks: Array.from({ length: 8 }, (_, i) => `c${i}`), gapMs: 250 });
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    const reader = response.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    server.proc.kill("SIGTERM");
    await server.waitFor(/SIGTERM: finishing 1 in-flight/);
    await expect(fetch(`${server.url}/health`)).rejects.toThrow();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain('"content":"c7"');
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(await server.proc.exited).toBe(0);
  });

  test("--reload picks up a changed RATE_LIMIT_RPM without a restart by hand", async () => {
    const user = userDir();
    const configDir = join(user.dir, ".config", "parley");
    const server = await startCli(["--reload"], { cwd: user.dir, env: { ...user.env, API_KEY: TEST_KEY, PARLEY_CONFIG_DIR: configDir } });
    try {
      await server.waitFor(/listening on/);
      const limit = async () => (await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${TEST_KEY}`, connection: "close" } })).headers.get("x-ratelimit-limit");
      expect(await limit()).toBe("600");
      writeFileSync(join(configDir, "config.env"), "RATE_LIMIT_RPM=7\n");
      // "reloaded" comes once the old worker takes no new connection (however late a busy machine
      // lets it read the supervisor's stop): the next request is the new worker's.
      await server.waitFor(/reloaded/, 90_000);
      expect(await limit()).toBe("7");
      writeFileSync(join(configDir, "config.env"), "RATE_LIMIT_RPM=lots\n");
      await server.waitFor(/invalid, keeping the running workers/, 90_000);
      expect(await limit()).toBe("7");
    } finally {
      await server.stop();
    }
  }, 240_000);

  test("request logs name model, provider and status, and never a key or message content", async () => {
    const user = userDir();
    const secrets = { API_KEY: "sk-client-secret-XYZXYZXYZ123", ALPHA_API_KEY: "sk-upstream-secret-ABCABC456" };
    const server = await startCli(["--log-level", "debug"], { cwd: user.dir, env: { ...user.env, ...secrets, ALPHA_BASE_URL: upstream.url, DEBUG: "true" } });
    const headers = { authorization: `Bearer ${secrets.API_KEY}`, "content-type": "application/json" };
    const body = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "my-private-question" }] });
    await (await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers, body })).text();
    await (await fetch(`${server.url}/v1/chat/completions?target_format=beta_messages`, { method: "POST", headers, body })).text();
    await (await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: { ...headers, authorization: "Bearer sk-wrong-guess-999" }, body })).text();
    // The line is written just after the response goes out.
    await server.waitFor(/completions 401 /);
    const log = await server.stop();
    expect(log).toMatch(/POST \/v1\/chat\/completions 200 [\d.]+ms model=gpt-4o-mini provider=alpha upstream_ms=\d+ id=/);
    expect(log).toMatch(/POST \/v1\/chat\/completions 401 /);
    for (const secret of [...Object.values(secrets), "sk-wrong-guess-999", "my-private-question", "Hello from OpenAI"]) expect(log).not.toContain(secret);
  });
});

function processesMatching(text: string): number[] {
  return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").includes(text);
    } catch {
      return false;
    }
  }).map(Number);
}
