import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TEST_KEY } from "../lib/app.ts";
import { userDir } from "../lib/cli.ts";
import { eventually, serve } from "../server/serve-process.ts";

const FIRST = `[upstreams.first]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodels = ["one"]\n`;

/** A user whose parley.toml sits in the working directory. */
function user(toml: string) {
  const u = userDir();
  const configDir = join(u.dir, ".config", "parley");
  mkdirSync(configDir, { recursive: true });
  const file = join(u.dir, "parley.toml");
  writeFileSync(file, toml);
  return { cwd: u.dir, file, env: { ...u.env, PARLEY_CONFIG_DIR: configDir, API_KEY: TEST_KEY } };
}

const health = async (url: string) => (await (await fetch(`${url}/health`)).json()).services as Record<string, string>;
const upstreamOf = async (url: string, model: string) => {
  const response = await fetch(`${url}/v1/models/${model}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
  return response.ok ? ((await response.json()) as { provider: string }).provider : response.status;
};

describe("reloading the upstreams file (contract 13)", () => {
  test("an edit is applied to later requests; a broken edit is refused with its line and the running configuration stays", async () => {
    const u = user(FIRST);
    const server = await serve(["--port", "0"], u);
    try {
      const { url } = server.ready;
      expect(await health(url)).toMatchObject({ first: "available", mock: "available" });
      expect(await upstreamOf(url, "one")).toBe("first");

      // Add one, change one.
      writeFileSync(u.file, `${FIRST.replace('["one"]', '["one", "uno"]')}[upstreams.second]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v2"\nmodels = ["two"]\n`);
      await eventually(() => upstreamOf(url, "two"), (v) => v === "second");
      expect(await upstreamOf(url, "uno")).toBe("first");
      expect(server.stderr()).toMatch(/upstreams reloaded \(parley\.toml changed\): added second; changed first/);

      // A broken edit: refused, with the file's line; everything still routes as before.
      writeFileSync(u.file, `${FIRST}\n[upstreams.third]\nkind = "opneai"\n`);
      await eventually(() => server.stderr(), (e) => e.includes("upstreams not reloaded"));
      expect(server.stderr()).toMatch(/parley\.toml:7: unknown kind "opneai" \(did you mean "openai"\?\)/);
      expect(await upstreamOf(url, "two")).toBe("second");

      // Remove one; SIGHUP reloads too.
      writeFileSync(u.file, FIRST);
      await eventually(() => upstreamOf(url, "two"), (v) => v === 404);
      server.proc.kill("SIGHUP");
      await eventually(() => server.stderr(), (e) => /upstreams reloaded \(SIGHUP\)/.test(e));
      expect(Object.keys(await health(url))).toEqual(["alpha", "beta", "first", "mock"]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("a bad file stops serve at start with one FILE:LINE line, exit 2", async () => {
    const u = user(`[upstreams.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\napi_kye = "x"\n`);
    const proc = Bun.spawn(["bun", join(import.meta.dir, "../../src/cli.ts"), "serve", "--port", "0"], { cwd: u.cwd, env: u.env, stdout: "pipe", stderr: "pipe" });
    expect(await proc.exited).toBe(2);
    const stderr = await new Response(proc.stderr).text();
    expect(stderr.trim()).toMatch(/parley\.toml:4: unknown key 'api_kye' in \[upstreams\.local\] \(kind openai\) \(did you mean 'api_key'\?\)/);
    expect(stderr).not.toContain("    at ");
  });
});
