import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { runCli, startCli, userDir } from "./lib/cli.ts";

const SECRETS = {
  API_KEY: "sk-client-key-ABCDEFGHIJKLMNOP",
  ALPHA_API_KEY: "sk-openai-secret-QRSTUVWXYZ123456",
  BETA_ACCESS_KEY_ID: "AKIAIOSFODNN7EXAMPLE",
  BETA_SECRET_ACCESS_KEY: "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
};

describe("parley CLI", () => {
  test("--version prints the package version", async () => {
    const { stdout, code } = await runCli(["--version"]);
    expect(code).toBe(0);
    expect(stdout.trim()).toBe(pkg.version);
  });

  test("config show prints values with their source and masks every secret", async () => {
    const user = userDir();
    writeFileSync(join(user.dir, ".env"), "PORT=9100\n");
    const { stdout, code } = await runCli(["config", "show"], { cwd: user.dir, env: { ...user.env, ...SECRETS, BETA_REGION: "us-west-2" } });
    expect(code).toBe(0);
    expect(stdout).toMatch(/PORT\s+9100\s+\[\.env\]/);
    expect(stdout).toMatch(/BETA_REGION\s+us-west-2\s+\[env\]/);
    expect(stdout).toMatch(/HOST\s+127\.0\.0\.1\s+\[default\]/);
    expect(stdout).toMatch(/ALPHA_API_KEY\s+\*\*\*\*3456\s+\[env\]/);
    for (const secret of Object.values(SECRETS)) expect(stdout).not.toContain(secret);
  });

  test("a bad value stops with one line naming it, and exit code 2", async () => {
    const user = userDir();
    const { stderr, code } = await runCli(["serve"], { cwd: user.dir, env: { ...user.env, RATE_LIMIT_RPM: "lots" } });
    expect(code).toBe(2);
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toContain('RATE_LIMIT_RPM="lots"');
  });

  test("a bad flag is reported the same way", async () => {
    const user = userDir();
    const { stderr, code } = await runCli(["serve", "--port", "http"], { cwd: user.dir, env: user.env });
    expect(code).toBe(2);
    expect(stderr).toContain('PORT="http" (from flag)');
  });

  test("config set writes the user config file and config show reads it back", async () => {
    const user = userDir();
    expect((await runCli(["config", "set", "DEFAULT_ALPHA_MODEL", "gpt-4o-mini"], { cwd: user.dir, env: user.env })).code).toBe(0);
    const { stdout } = await runCli(["config", "show"], { cwd: user.dir, env: user.env });
    expect(stdout).toMatch(/DEFAULT_ALPHA_MODEL\s+gpt-4o-mini\s+\[config file\]/);
    const bad = await runCli(["config", "set", "PORT", "x"], { cwd: user.dir, env: user.env });
    expect(bad.code).toBe(2);
  });
});

describe("parley serve", () => {
  test("without API_KEY it generates one, stores it, prints where, and requires it", async () => {
    const user = userDir();
    const server = await startCli([], { cwd: user.dir, env: user.env });
    try {
      const file = join(user.dir, ".config", "parley", "config.env");
      const key = /API_KEY='(.+)'/.exec(readFileSync(file, "utf8"))?.[1];
      expect(key).toBeTruthy();
      expect(server.output()).toContain(file);
      expect(server.output()).toContain(key!);
      expect((await fetch(`${server.url}/v1/models`)).status).toBe(401);
      expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  test("answers /health, and its logs never contain a secret", async () => {
    const user = userDir();
    const server = await startCli(["--log-level", "trace"], { cwd: user.dir, env: { ...user.env, ...SECRETS, BETA_REGION: "us-east-1", DEBUG: "true" } });
    const auth = { authorization: `Bearer ${SECRETS.API_KEY}` };
    expect(await (await fetch(`${server.url}/health`)).json()).toMatchObject({ status: "healthy", services: { alpha: "available", beta: "available" } });
    await fetch(`${server.url}/v1/models`, { headers: auth });
    await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${SECRETS.ALPHA_API_KEY}` } });
    await fetch(`${server.url}/v1/nope`, { headers: auth });
    const log = await server.stop();
    expect(log).toContain("listening on");
    for (const secret of Object.values(SECRETS)) expect(log).not.toContain(secret);
  });
});
