import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { testApp } from "../lib/app.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { bodyFor, writeToml, where } from "./fleet.ts";

const local = await startFakeOpenAI();
const other = await startFakeOpenAI();
afterAll(() => (local.stop(), other.stop()));
beforeEach(() => (local.reset(), other.reset()));

const app = (toml: string, env: Record<string, string> = {}) => testApp({ PARLEY_UPSTREAMS: writeToml(toml).file, ...env });
const ask = (json: ReturnType<typeof app>["json"], model: string) => json("/v1/chat/completions", bodyFor("/v1/chat/completions", model));
const openai = (name: string, url: string, extra = "") => `[upstreams.${name}]\nkind = "openai"\nbase_url = "${url}"\n${extra}\n`;

describe("upstreams at their edges", () => {
  test("MODEL_ROUTES naming 'openai' means the upstream of that name when the file declares one (else alpha)", async () => {
    const { json } = app(openai("openai", local.url), { MODEL_ROUTES: "foo-*=openai" });
    expect(where(await ask(json, "foo-1"))).toMatchObject({ status: 200, upstream: "openai" });
    const spec = testApp({ MODEL_ROUTES: "foo-*=openai", ALPHA_BASE_URL: other.url });
    expect(where(await ask(spec.json, "foo-1"))).toMatchObject({ status: 200, upstream: "alpha" });
  });

  test("a route goes past a target that is not configured to one that is", async () => {
    const { json } = app(`${openai("local", local.url)}[[routes]]\nmatch = "x-*"\nto = ["alpha", "local"]\n`);
    expect(where(await ask(json, "x-1"))).toMatchObject({ status: 200, upstream: "local", attempts: "1" });
  });

  test("${VAR} is read in a route's targets and name", async () => {
    const { json } = app(`${openai("local", local.url)}[[routes]]\nname = "\${ROUTE_NAME}"\nmatch = "x-*"\nto = [{ upstream = "\${TARGET}", model = "\${SENT}" }]\n`, { TARGET: "local", SENT: "qwen3", ROUTE_NAME: "team" });
    expect(where(await ask(json, "x-1"))).toMatchObject({ status: 200, upstream: "local", route: "team" });
    expect(local.last().body.model).toBe("qwen3");
  });

  test("'<upstream>/' with no model is no address: an unknown model, nothing sent", async () => {
    const { json } = app(openai("local", local.url));
    expect((await ask(json, "local/")).status).toBe(404);
    expect(local.received).toHaveLength(0);
  });

  test("a fallback that routes nowhere leaves the failed call's error, not its own 404", async () => {
    const { json } = app(openai("local", local.url, 'models = ["m"]'), { MODEL_FALLBACKS: "m=nowhere-model", UPSTREAM_RETRIES: "0" });
    local.next({ kind: "error", status: 503, message: "down" });
    const response = await ask(json, "m");
    expect(where(response)).toMatchObject({ status: 503, upstream: "local" });
  });

  test("a password in an upstream's URL never reaches the client", async () => {
    const { json } = app(openai("local", "http://bob:hunter2pw@127.0.0.1:9/v1", 'models = ["m"]'), { UPSTREAM_RETRIES: "0" });
    const response = await ask(json, "m");
    expect(response.status).toBe(503);
    const text = await response.text();
    expect(text).toContain("bob:****@127.0.0.1:9");
    expect(text).not.toContain("hunter2pw");
  });

  test("values are checked as the variables are: a bad region, URL, timeout or retries is a FILE:LINE error", () => {
    const bad = (toml: string) => {
      const { file } = writeToml(toml);
      try {
        loadConfig({ env: { PARLEY_UPSTREAMS: file, HOME: "/nonexistent" }, cwd: "/" });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message.replace(file, "FILE");
      }
      throw new Error("accepted");
    };
    expect(bad('[upstreams.b]\nkind = "bedrock"\nregion = "US East 1"\n')).toBe('FILE:3: region in [upstreams.b] must be an AWS region such as us-east-1 (or a Google Cloud region such as us-east5), not "US East 1"');
    expect(bad('[upstreams.o]\nkind = "openai"\nbase_url = "localhost:11434/v1"\n')).toStartWith("FILE:3: base_url in [upstreams.o] must be an http:// or https:// URL");
    expect(bad('[upstreams.o]\nkind = "openai"\nbase_url = "http://h/v1"\ntimeout_ms = 0\n')).toStartWith("FILE:4: timeout_ms in [upstreams.o] must be at least 1");
    expect(bad('[upstreams.o]\nkind = "openai"\nbase_url = "http://h/v1"\nretries = 99\n')).toStartWith("FILE:4: retries in [upstreams.o] must be from 0 to 10");
    // A secret written without quotes is not echoed by the syntax error.
    expect(bad('[upstreams.o]\nkind = "openai"\nbase_url = "http://h/v1"\napi_key = sk-live-SECRETVALUE\n')).not.toContain("SECRETVALUE");
  });

  test("an upstreams file that cannot be read is one line, not a stack trace", () => {
    const { dir } = writeToml("");
    expect(() => loadConfig({ env: { PARLEY_UPSTREAMS: dir, HOME: "/nonexistent" }, cwd: "/" })).toThrow(/cannot be read: EISDIR/);
  });
});
