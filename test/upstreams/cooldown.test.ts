import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { loadConfig } from "../../src/config.ts";
import { bodyFor, fleetApp, SECRETS, startFakes, where } from "./fleet.ts";

const fakes = await startFakes();
afterAll(() => fakes.stop());
beforeEach(() => fakes.reset());

/**
 * A cooldown far longer than any test, so nothing here depends on how fast the machine is; no
 * retries beyond one call per target, so every call a fake receives is one the test asked for.
 */
function app() {
  const { json, call, app, config, file } = fleetApp(fakes, { UPSTREAM_COOLDOWN_S: "600", UPSTREAM_RETRIES: "0" });
  return {
    app, config, file,
    ask: (model = "pair-model") => json("/v1/chat/completions", bodyFor("/v1/chat/completions", model)),
    services: async () => (await (await call("/health")).json()).services as Record<string, string>,
  };
}

const fail = (n: number) => Array.from({ length: n }, () => ({ kind: "error" as const, status: 503, message: "overloaded" }));

describe("cooldown: an upstream failing 3 times in a row is skipped for UPSTREAM_COOLDOWN_S (contract 13)", () => {
  test("after three retryable failures in a row the upstream gets no calls while it cools, and /health says cooling", async () => {
    const { ask, services } = app();
    fakes.ollama.next(...fail(3));
    for (let i = 0; i < 3; i++) expect(where(await ask())).toMatchObject({ status: 200, upstream: "openrouter", attempts: "2" });
    expect(fakes.ollama.received).toHaveLength(3);
    expect(await services()).toMatchObject({ ollama: "cooling", openrouter: "available", groq: "available" });

    // ollama would answer now, but it is cooling: every call goes straight to openrouter, in one call.
    for (let i = 0; i < 5; i++) expect(where(await ask())).toMatchObject({ status: 200, upstream: "openrouter", attempts: "1" });
    expect(fakes.ollama.received).toHaveLength(3);
    expect(fakes.openrouter.received).toHaveLength(8);

    // Other routes that list ollama skip it too: shared-model is listed by ollama, then openrouter.
    expect(where(await ask("shared-model"))).toMatchObject({ status: 200, upstream: "openrouter", attempts: "1" });
    expect(fakes.ollama.received).toHaveLength(3);
  });

  test("failures that are not in a row do not cool an upstream", async () => {
    const { ask, services } = app();
    fakes.ollama.next(...fail(2), { kind: "reply" }, ...fail(2));
    const upstreams = [];
    for (let i = 0; i < 5; i++) upstreams.push(where(await ask()).upstream);
    expect(upstreams).toEqual(["openrouter", "openrouter", "ollama", "openrouter", "openrouter"]);
    expect((await services()).ollama).toBe("available");
    expect(where(await ask())).toMatchObject({ upstream: "ollama", attempts: "1" });
  });

  test("a 400 is not a strike: the upstream is not cooled by the client's mistakes", async () => {
    const { ask, services } = app();
    fakes.ollama.next(...Array.from({ length: 4 }, () => ({ kind: "error" as const, status: 400, message: "bad request" })));
    for (let i = 0; i < 4; i++) expect((await ask()).status).toBe(400);
    expect((await services()).ollama).toBe("available");
    expect(fakes.openrouter.received).toHaveLength(0);
  });

  test("when every target is cooling they are all tried, and one success ends that upstream's cooldown", async () => {
    const { ask, services } = app();
    fakes.ollama.next(...fail(3));
    for (let i = 0; i < 3; i++) await ask();
    // openrouter now fails three times, alone (ollama cools): the client sees the 503s.
    fakes.openrouter.next(...fail(3));
    for (let i = 0; i < 3; i++) expect(where(await ask())).toMatchObject({ status: 503, upstream: "openrouter", attempts: "1" });
    expect(await services()).toMatchObject({ ollama: "cooling", openrouter: "cooling" });
    expect(fakes.ollama.received).toHaveLength(3);

    // Both cooling: the route's targets are tried as if none were; ollama answers, and is warm again.
    expect(where(await ask())).toMatchObject({ status: 200, upstream: "ollama", attempts: "1" });
    expect(await services()).toMatchObject({ ollama: "available", openrouter: "cooling" });
    expect(where(await ask())).toMatchObject({ status: 200, upstream: "ollama" });
    expect(fakes.ollama.received).toHaveLength(5);
    expect(fakes.openrouter.received).toHaveLength(6);
  });

  test("UPSTREAM_COOLDOWN_S=0 never skips an upstream", async () => {
    const { json, call } = fleetApp(fakes, { UPSTREAM_COOLDOWN_S: "0", UPSTREAM_RETRIES: "0" });
    fakes.ollama.next(...fail(5));
    for (let i = 0; i < 5; i++) await json("/v1/chat/completions", bodyFor("/v1/chat/completions", "pair-model"));
    expect(fakes.ollama.received).toHaveLength(5);
    expect((await (await call("/health")).json()).services.ollama).toBe("available");
  });

  test("a reload that changes an upstream's settings ends its cooldown; an unchanged one keeps cooling", async () => {
    const { ask, services, app: gateway, config, file } = app();
    fakes.ollama.next(...fail(3));
    for (let i = 0; i < 3; i++) await ask();
    expect((await services()).ollama).toBe("cooling");
    const reload = (text: string) => {
      writeFileSync(file, text);
      return gateway.reload(loadConfig({ env: { PARLEY_UPSTREAMS: file, PARLEY_CONFIG_DIR: config.configDir, PARLEY_DATA_DIR: config.dataDir, UPSTREAM_COOLDOWN_S: "600", UPSTREAM_RETRIES: "0", ...SECRETS }, cwd: config.dataDir }).config);
    };
    const original = readFileSync(file, "utf8");
    expect(() => reload(original)).not.toThrow();
    expect((await services()).ollama).toBe("cooling");
    reload(original.replace("[upstreams.ollama]\n", "[upstreams.ollama]\ntimeout_ms = 60000\n"));
    expect((await services()).ollama).toBe("available");
    expect(where(await ask())).toMatchObject({ status: 200, upstream: "ollama", attempts: "1" });
  });
});
