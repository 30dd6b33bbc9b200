import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig, setConfigValue } from "../src/config.ts";

function workspace(files: { dotenv?: string; configFile?: string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "parley-config-"));
  const configDir = join(dir, "config");
  mkdirSync(configDir);
  if (files.dotenv) writeFileSync(join(dir, ".env"), files.dotenv);
  if (files.configFile) writeFileSync(join(configDir, "config.env"), files.configFile);
  return { cwd: dir, env: { HOME: dir, PARLEY_CONFIG_DIR: configDir, PARLEY_TRUST_CWD: "1" } as Record<string, string> };
}

describe("precedence: flag > env > ./.env > user config file > default", () => {
  const ws = workspace({ dotenv: "PORT=8002\nLOG_LEVEL=debug\nHOST=0.0.0.0\n", configFile: "PORT=8003\nLOG_LEVEL=warn\nHOST=::1\nRATE_LIMIT_RPM=5\n" });

  test("each layer wins over the ones below it", () => {
    const { config, entries } = loadConfig({ cwd: ws.cwd, env: { ...ws.env, PORT: "8001", LOG_LEVEL: "error" }, flags: { PORT: "8000" } });
    expect(config.port).toBe(8000);
    expect(config.logLevel).toBe("error");
    expect(config.host).toBe("0.0.0.0");
    expect(config.rateLimitRpm).toBe(5);
    expect(config.upstreamTimeoutMs).toBe(600000);
    const source = (key: string) => entries.find((e) => e.key === key)!.source;
    expect([source("PORT"), source("LOG_LEVEL"), source("HOST"), source("RATE_LIMIT_RPM"), source("UPSTREAM_TIMEOUT_MS")]).toEqual([
      "flag", "env", ".env", "config file", "default",
    ]);
  });

  test("an unset flag falls through to the environment", () => {
    const { config } = loadConfig({ cwd: ws.cwd, env: { ...ws.env, PORT: "8001" }, flags: { PORT: undefined } });
    expect(config.port).toBe(8001);
  });
});

describe("aliases", () => {
  test("OPENAI_API_KEY is used only when ALPHA_API_KEY is unset", () => {
    const ws = workspace();
    expect(loadConfig({ cwd: ws.cwd, env: { ...ws.env, OPENAI_API_KEY: "sk-openai" } }).config.upstreams.upstreams[0]!.settings).toMatchObject({ apiKey: "sk-openai" });
    const both = { ...ws.env, OPENAI_API_KEY: "sk-openai", ALPHA_API_KEY: "sk-alpha" };
    expect(loadConfig({ cwd: ws.cwd, env: both }).config.upstreams.upstreams[0]!.settings).toMatchObject({ apiKey: "sk-alpha" });
  });

  test("a spec name in the config file beats an alias in the environment", () => {
    const ws = workspace({ configFile: "ALPHA_API_KEY=sk-from-file\n" });
    expect(loadConfig({ cwd: ws.cwd, env: { ...ws.env, OPENAI_API_KEY: "sk-env" } }).config.upstreams.upstreams[0]!.settings).toMatchObject({ apiKey: "sk-from-file" });
  });

  test("the standard AWS variables fill the BETA_ settings", () => {
    const ws = workspace();
    const { config } = loadConfig({
      cwd: ws.cwd,
      env: { ...ws.env, AWS_REGION: "eu-west-1", AWS_ACCESS_KEY_ID: "AKIAEXAMPLE", AWS_SECRET_ACCESS_KEY: "secret", AWS_PROFILE: "dev" },
    });
    expect(config.upstreams.upstreams[1]!.settings).toMatchObject({ region: "eu-west-1", accessKeyId: "AKIAEXAMPLE", secretAccessKey: "secret", profile: "dev" });
  });
});

describe("derived settings", () => {
  const ws = workspace();
  const load = (env: Record<string, string>) => loadConfig({ cwd: ws.cwd, env: { ...ws.env, ...env } }).config;

  test("CORS is open outside production and limited to CORS_ORIGINS in it", () => {
    expect(load({ CORS_ORIGINS: "https://a.example" }).corsOrigins).toBe("*");
    expect(load({ ENVIRONMENT: "production", CORS_ORIGINS: "https://a.example, https://b.example" }).corsOrigins).toEqual([
      "https://a.example", "https://b.example",
    ]);
  });

  test("scoped keys, aliases and routes are parsed", () => {
    const config = load({ API_KEYS: "k1-0000000000000001:chat+models,k2-0000000000000002:files:read", MODEL_ALIASES: "fast=gpt-4o-mini", MODEL_ROUTES: "llama*=alpha" });
    expect(config.apiKeys).toEqual([{ key: "k1-0000000000000001", scopes: ["chat", "models"] }, { key: "k2-0000000000000002", scopes: ["files:read"] }]);
    expect([...config.modelAliases]).toEqual([["fast", "gpt-4o-mini"]]);
    expect(config.modelRoutes).toEqual([{ pattern: "llama*", upstream: "alpha" }]);
  });

  test("data and config dirs follow XDG when not set", () => {
    const { config } = loadConfig({ cwd: ws.cwd, env: { HOME: "/home/u", XDG_DATA_HOME: "/xdg/data" } });
    expect(config.dataDir).toBe("/xdg/data/parley");
    expect(config.configDir).toBe("/home/u/.config/parley");
  });
});

describe("bad values fail at load, naming the variable, the value and what is allowed", () => {
  const ws = workspace();
  const cases: [string, string, RegExp][] = [
    ["PORT", "eighty", /PORT="eighty".*integer from 0 to 65535/],
    ["PORT", "70000", /PORT="70000"/],
    ["LOG_LEVEL", "loud", /LOG_LEVEL="loud".*one of/],
    ["DEBUG", "maybe", /DEBUG="maybe".*one of/],
    ["ALPHA_BASE_URL", "localhost:11434", /ALPHA_BASE_URL=.*http/],
    ["BETA_REGION", "Frankfurt", /BETA_REGION=.*AWS region/],
    ["RATE_LIMIT_RPM", "-1", /RATE_LIMIT_RPM/],
    ["MAX_UPLOAD_BYTES", "0", /MAX_UPLOAD_BYTES/],
    ["API_KEYS", "k1:chat+root", /API_KEYS=\*\*\*\*.*scopes from chat/],
    ["MODEL_ROUTES", "llama*=ollama", /MODEL_ROUTES/],
    ["WORKERS", "0", /WORKERS/],
    // Contract 25: a client's key is at least 16 characters.
    ["API_KEY", "x", /API_KEY=\*\*\*\*.*at least 16 characters/],
    ["API_KEYS", "sk-short:chat", /API_KEYS=\*\*\*\*.*at least 16 characters/],
  ];
  for (const [key, value, message] of cases) {
    test(`${key}=${value}`, () => {
      expect(() => loadConfig({ cwd: ws.cwd, env: { ...ws.env, [key]: value } })).toThrow(ConfigError);
      expect(() => loadConfig({ cwd: ws.cwd, env: { ...ws.env, [key]: value } })).toThrow(message);
    });
  }

  test("a bad secret is named but not shown", () => {
    try {
      loadConfig({ cwd: ws.cwd, env: { ...ws.env, ALPHA_API_KEY: "sk-has a-space-in-it-1234" } });
      throw new Error("expected a ConfigError");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect(String(error)).toContain("ALPHA_API_KEY");
      expect(String(error)).not.toContain("sk-has a-space");
    }
  });
});

describe("config set", () => {
  test("writes the user config file, keeps other values, and validates first", () => {
    const ws = workspace({ configFile: "PORT=9000\n" });
    const file = join(ws.env.PARLEY_CONFIG_DIR!, "config.env");
    setConfigValue(file, "ALPHA_API_KEY", "sk-new#value'with\"quotes");
    const { config } = loadConfig({ cwd: ws.cwd, env: ws.env });
    expect(config.port).toBe(9000);
    expect(config.upstreams.upstreams[0]!.settings).toMatchObject({ apiKey: "sk-new#value'with\"quotes" });
    expect(() => setConfigValue(file, "PORT", "x")).toThrow(/PORT="x"/);
    expect(() => setConfigValue(file, "NOT_A_SETTING", "1")).toThrow(/not a parley setting/);
    expect(readFileSync(file, "utf8")).not.toContain('PORT="x"');
  });
});
