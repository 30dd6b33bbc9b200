import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type Config } from "../../src/config.ts";
import { createLogger } from "../../src/log.ts";
import { createApp } from "../../src/server/app.ts";
import { createTelemetry } from "../../src/telemetry/index.ts";
import { VERSION } from "../../src/version.ts";

export const TEST_KEY = "sk-test-0123456789abcdef";

/** Settings as a user would give them, on top of an isolated temp directory. */
export function testConfig(env: Record<string, string> = {}): Config {
  return testLoaded(env).config;
}

/** The configuration with the settings as read (their sources), as `serve` has them. */
export function testLoaded(env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "parley-app-"));
  return loadConfig({
    // Model discovery stays off unless a test turns it on: it would call the upstreams in the background.
    env: { HOME: dir, PARLEY_DATA_DIR: join(dir, "data"), PARLEY_CONFIG_DIR: join(dir, "config"), API_KEY: TEST_KEY, LOG_LEVEL: "silent", MODELS_REFRESH_S: "0", ...env },
    cwd: dir,
  });
}

/** The app, in process, with a `call` that sends the test key unless told otherwise. */
export function testApp(env: Record<string, string> = {}) {
  const { config, entries } = testLoaded(env);
  // OpenTelemetry from the OTEL_* variables given, as `serve` reads them from its environment (off without them).
  const { telemetry } = createTelemetry(env, VERSION);
  const app = createApp({ config, entries, log: createLogger(config.logLevel), telemetry });
  const call = (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const headers = new Headers(init.headers);
    if (init.key !== null && !headers.has("authorization") && !headers.has("x-api-key")) {
      headers.set("authorization", `Bearer ${init.key ?? TEST_KEY}`);
    }
    return app.handle(new Request(`http://localhost${path}`, { ...init, headers }));
  };
  const json = (path: string, body: unknown, init: RequestInit & { key?: string | null } = {}) =>
    call(path, { method: "POST", ...init, body: JSON.stringify(body), headers: { "content-type": "application/json", ...init.headers } });
  return { app, config, call, json };
}
