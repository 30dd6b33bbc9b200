import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TEST_KEY } from "../lib/app.ts";
import { userDir } from "../lib/cli.ts";
import { alive, childrenOf, eventually, serve, serveFails } from "./serve-process.ts";

/** A fresh user with a config dir of its own, and the test key. */
function user(extra: Record<string, string> = {}) {
  const u = userDir();
  const configDir = join(u.dir, ".config", "parley");
  mkdirSync(configDir, { recursive: true });
  return { cwd: u.dir, configFile: join(configDir, "config.env"), env: { ...u.env, PARLEY_CONFIG_DIR: configDir, API_KEY: TEST_KEY, ...extra } };
}

/** A fresh connection each time, so that the kernel spreads requests over every worker. */
const limitHeader = async (url: string, key = TEST_KEY) =>
  (await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}`, connection: "close" } })).headers.get("x-ratelimit-limit");

const refuses = async (url: string) => {
  try {
    await fetch(`${url}/health`, { headers: { connection: "close" } });
    return false;
  } catch {
    return true;
  }
};

describe("the ready line", () => {
  test("serve --port 0 prints one JSON line on stdout with the real url, the pid and the providers", async () => {
    const u = user({ ALPHA_API_KEY: "sk-upstream-0000000000001" });
    const server = await serve(["--port", "0"], u);
    try {
      expect(server.ready).toEqual({ event: "ready", url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), pid: server.proc.pid, providers: { alpha: "available", beta: "not_configured", mock: "available" } });
      expect(server.ready.url).not.toEndWith(":0");
      expect((await fetch(`${server.ready.url}/health`)).status).toBe(200);
      expect(server.stderr()).toContain("upstreams: alpha configured, beta not configured, mock configured");
      expect(server.stderr()).toContain("API key: from the environment");
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // Only the ready line: human lines go to stderr.
    expect(server.stdout().trimEnd().split("\n")).toHaveLength(1);
  });

  test("with --workers 2 the supervisor prints it once, when both workers serve", async () => {
    const u = user();
    const server = await serve(["--port", "0", "--workers", "2"], u);
    try {
      expect(server.ready.pid).toBe(server.proc.pid);
      expect(server.ready.providers).toEqual({ alpha: "not_configured", beta: "not_configured", mock: "available" });
      expect(server.stderr()).toMatch(/worker 1.*listening on/);
      expect(server.stderr()).toMatch(/worker 2.*listening on/);
      expect((await fetch(`${server.ready.url}/health`)).status).toBe(200);
      expect(server.stderr()).toMatch(/warn.*no real upstream is configured/i);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect(server.stdout().trimEnd().split("\n")).toHaveLength(1);
  });

  test("a generated key is announced on stderr, never on stdout", async () => {
    const u = user();
    delete (u.env as Record<string, string | undefined>).API_KEY;
    const server = await serve(["--port", "0"], u);
    await server.stop();
    expect(server.stderr()).toMatch(/generated one and stored it in .*config\.env:\n {2}sk-parley-/);
    expect(server.stderr()).toContain(`API key: in ${u.configFile}`);
    expect(server.stdout()).not.toContain("sk-parley-");
  });

  test("--log-format json (or LOG_FORMAT=json) makes every log line JSON, request lines included", async () => {
    for (const [args, env] of [[["--log-format", "json"], {}], [[], { LOG_FORMAT: "json" }]] as const) {
      const u = user(env);
      const server = await serve(["--port", "0", ...args], u);
      await fetch(`${server.ready.url}/v1/models?beta=true&api_key=sk-in-the-query-123`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
      await server.waitFor(/"event":"request"/);
      await server.stop();
      const lines = server.stderr().trimEnd().split("\n").map((line) => JSON.parse(line));
      expect(lines.find((l) => l.message?.includes("listening on"))).toMatchObject({ level: "info", time: expect.any(String) });
      expect(lines.find((l) => l.event === "request")).toMatchObject({ method: "GET", path: "/v1/models?beta=true&api_key=****", status: 200, id: expect.any(String) });
      expect(server.stderr()).not.toContain("sk-in-the-query-123");
    }
  });
});

describe("port safety", () => {
  test("a second parley on a port parley serves: one line naming the port, exit 2, alone or with workers", async () => {
    const u = user();
    const first = await serve(["--port", "0"], u);
    const port = new URL(first.ready.url).port;
    try {
      for (const extra of [[], ["--workers", "2"], ["--reload"]]) {
        const second = await serveFails(["--port", port, ...extra], u);
        expect(second.code).toBe(2);
        expect(second.stderr.trim().split("\n")).toHaveLength(1);
        expect(second.stderr).toContain(`port ${port}`);
        expect(second.stderr).toContain("already in use");
        expect(second.stdout).toBe("");
      }
      expect((await fetch(`${first.ready.url}/health`)).status).toBe(200);
    } finally {
      await first.stop();
    }
  });

  test("a port another program holds, even with SO_REUSEPORT: the same line, exit 2", async () => {
    const other = Bun.serve({ hostname: "127.0.0.1", port: 0, reusePort: true, fetch: () => new Response("not parley") });
    try {
      for (const extra of [[], ["--workers", "2"]]) {
        const result = await serveFails(["--port", String(other.port), ...extra], user());
        expect(result.code).toBe(2);
        expect(result.stderr.trim()).toMatch(new RegExp(`^parley: port ${other.port} on 127\\.0\\.0\\.1 is already in use`));
      }
    } finally {
      other.stop(true);
    }
  });
});

describe("supervised workers", () => {
  test("--reload at --log-level warn retires the old workers: every request then sees the new configuration", async () => {
    const u = user();
    writeFileSync(u.configFile, "RATE_LIMIT_RPM=600\n");
    const server = await serve(["--port", "0", "--workers", "2", "--reload", "--log-level", "warn"], u);
    try {
      const first = childrenOf(server.proc.pid);
      expect(first).toHaveLength(2);
      writeFileSync(u.configFile, "RATE_LIMIT_RPM=7\n");
      // The old workers are gone, and exactly two new ones serve.
      await eventually(() => childrenOf(server.proc.pid), (pids) => pids.length === 2 && pids.every((pid) => !first.includes(pid)));
      for (const pid of first) expect(alive(pid)).toBe(false);
      const seen = new Set<string | null>();
      for (let i = 0; i < 20; i++) seen.add(await limitHeader(server.ready.url));
      expect([...seen]).toEqual(["7"]);
      // Readiness never came from a log line: at warn there are none.
      expect(server.stderr()).not.toContain("listening on");
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("two reloads in a row leave exactly N workers, serving the last configuration", async () => {
    const u = user();
    writeFileSync(u.configFile, "RATE_LIMIT_RPM=600\n");
    const server = await serve(["--port", "0", "--workers", "3", "--reload"], u);
    try {
      const first = childrenOf(server.proc.pid);
      writeFileSync(u.configFile, "RATE_LIMIT_RPM=7\n");
      // The second edit lands while the first reload's workers are starting (most of the time:
      // either way, what is left must be exactly three workers with the last configuration).
      await server.waitFor(/starting new workers/);
      writeFileSync(u.configFile, "RATE_LIMIT_RPM=9\n");
      // Each change ends in one line, superseded or reloaded (in either order: the first may finish
      // starting after the second): however late a busy machine notices the second edit, both are
      // handled before the workers are counted.
      // Nine workers start and stop on the way: on a busy machine that takes a while, hence the deadlines.
      await server.waitFor(/(superseded|reloaded:)[\s\S]*(superseded|reloaded:)/, 90_000);
      // Then every reload that started has ended (none still starting workers), the workers of the
      // others have exited, and three serve the last configuration: the events, not a guess at how long they take.
      const state = async () => {
        const log = server.stderr();
        const pending = (log.match(/starting new workers/g)?.length ?? 0) - (log.match(/superseded this reload|reloaded:|did not start/g)?.length ?? 0);
        return { pending, pids: childrenOf(server.proc.pid) };
      };
      await eventually(state, ({ pending, pids }) => pending === 0 && pids.length === 3 && pids.every((pid) => !first.includes(pid)), 90_000);
      const seen = new Set<string | null>();
      for (let i = 0; i < 20; i++) seen.add(await limitHeader(server.ready.url));
      expect([...seen]).toEqual(["9"]);
      expect((await state()).pids).toHaveLength(3);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 240_000);

  test("a changed API_KEY reaches every worker", async () => {
    const u = user();
    delete (u.env as Record<string, string | undefined>).API_KEY;
    writeFileSync(u.configFile, `API_KEY=${TEST_KEY}\n`);
    const server = await serve(["--port", "0", "--workers", "2", "--reload", "--log-level", "error"], u);
    try {
      const first = childrenOf(server.proc.pid);
      const rotated = "sk-rotated-key-000000000001";
      writeFileSync(u.configFile, `API_KEY=${rotated}\n`);
      await eventually(() => childrenOf(server.proc.pid), (pids) => pids.length === 2 && pids.every((pid) => !first.includes(pid)));
      const statuses = async (key: string) => {
        const seen = new Set<number>();
        for (let i = 0; i < 10; i++) seen.add((await fetch(`${server.ready.url}/v1/models`, { headers: { authorization: `Bearer ${key}`, connection: "close" } })).status);
        return [...seen];
      };
      expect(await statuses(TEST_KEY)).toEqual([401]);
      expect(await statuses(rotated)).toEqual([200]);
    } finally {
      await server.stop();
    }
  });

  test("SIGTERM stops every worker and the supervisor exits 0", async () => {
    const server = await serve(["--port", "0", "--workers", "2"], user());
    const workers = childrenOf(server.proc.pid);
    expect(workers).toHaveLength(2);
    expect(await server.stop()).toBe(0);
    await eventually(() => workers.filter(alive), (left) => left.length === 0, 5000);
    expect(await refuses(server.ready.url)).toBe(true);
  });

  test("a supervisor killed with SIGKILL leaves no worker serving", async () => {
    const server = await serve(["--port", "0", "--workers", "2"], user());
    const workers = childrenOf(server.proc.pid);
    expect(workers).toHaveLength(2);
    server.proc.kill("SIGKILL");
    await server.stop();
    await eventually(() => refuses(server.ready.url), Boolean, 5000);
    await eventually(() => workers.filter(alive), (left) => left.length === 0, 5000);
  });
});
