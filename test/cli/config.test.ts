import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, userDir } from "../lib/cli.ts";

describe("parley config get", () => {
  test("prints one effective value, unmasked, for scripts", async () => {
    const user = userDir();
    const env = { ...user.env, ALPHA_API_KEY: "sk-alpha-not-this-one-0000" };
    await runCli(["config", "set", "API_KEY", "sk-from-the-config-file-123"], { cwd: user.dir, env });
    const { stdout, stderr, code } = await runCli(["config", "get", "API_KEY"], { cwd: user.dir, env });
    expect({ stdout, stderr, code }).toEqual({ stdout: "sk-from-the-config-file-123\n", stderr: "", code: 0 });
    writeFileSync(join(user.dir, ".env"), "API_KEY=sk-from-dot-env-4567890\n");
    expect((await runCli(["config", "get", "API_KEY"], { cwd: user.dir, env })).stdout).toBe("sk-from-dot-env-4567890\n");
  });

  test("defaults and aliases count; directories are the ones in use", async () => {
    const user = userDir();
    const get = async (key: string, env: Record<string, string> = {}) => (await runCli(["config", "get", key], { cwd: user.dir, env: { ...user.env, ...env } })).stdout;
    expect(await get("PORT")).toBe("8000\n");
    expect(await get("BETA_REGION", { AWS_REGION: "eu-west-1" })).toBe("eu-west-1\n");
    expect(await get("AWS_REGION", { AWS_REGION: "eu-west-1" })).toBe("eu-west-1\n");
    expect(await get("PARLEY_DATA_DIR")).toBe(`${join(user.dir, ".data", "parley")}\n`);
  });

  test("an unset setting prints nothing and exits 1", async () => {
    const user = userDir();
    const { stdout, stderr, code } = await runCli(["config", "get", "DEFAULT_ALPHA_MODEL"], { cwd: user.dir, env: user.env });
    expect({ stdout, code }).toEqual({ stdout: "", code: 1 });
    expect(stderr).toContain("DEFAULT_ALPHA_MODEL is not set");
  });

  test("an unknown name exits 2 with the closest setting", async () => {
    const user = userDir();
    for (const typo of ["API_KY", "api_key"]) {
      const { stdout, stderr, code } = await runCli(["config", "get", typo], { cwd: user.dir, env: user.env });
      expect({ stdout, code }).toEqual({ stdout: "", code: 2 });
      expect(stderr).toContain(`${typo} is not a parley setting; did you mean API_KEY?`);
    }
  });
});

describe("parley config set", () => {
  test("says that a running server needs a restart or --reload", async () => {
    const user = userDir();
    const { stdout, code } = await runCli(["config", "set", "RATE_LIMIT_RPM", "60"], { cwd: user.dir, env: user.env });
    expect(code).toBe(0);
    expect(stdout).toContain(`RATE_LIMIT_RPM saved to ${join(user.dir, ".config", "parley", "config.env")}`);
    expect(stdout).toContain("restarted");
    expect(stdout).toContain("--reload");
  });

  test("warns when the environment hides the value it wrote", async () => {
    const user = userDir();
    const { stderr, code } = await runCli(["config", "set", "PORT", "9000"], { cwd: user.dir, env: { ...user.env, PORT: "9100" } });
    expect(code).toBe(0);
    expect(stderr).toContain("PORT is also set in the environment");
  });

  test("an unknown name exits 2 with the closest setting, and nothing is written", async () => {
    const user = userDir();
    const { stderr, code } = await runCli(["config", "set", "RATE_LIMIT_RPN", "60"], { cwd: user.dir, env: user.env });
    expect(code).toBe(2);
    expect(stderr).toContain("did you mean RATE_LIMIT_RPM?");
    expect(await Bun.file(join(user.dir, ".config", "parley", "config.env")).exists()).toBe(false);
  });

  test("with no arguments and no terminal, it says how to set a value from a script", async () => {
    const user = userDir();
    const { stderr, code } = await runCli(["config", "set"], { cwd: user.dir, env: user.env });
    expect(code).toBe(2);
    expect(stderr).toContain("parley config set KEY VALUE");
  });
});

describe("parley config unset", () => {
  test("removes one setting from the user config file and keeps the others", async () => {
    const user = userDir();
    const run = (...args: string[]) => runCli(["config", ...args], { cwd: user.dir, env: user.env });
    await run("set", "RATE_LIMIT_RPM", "60");
    await run("set", "DEFAULT_ALPHA_MODEL", "gpt-4o");
    const file = join(user.dir, ".config", "parley", "config.env");
    const removed = await run("unset", "RATE_LIMIT_RPM");
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`RATE_LIMIT_RPM removed from ${file}`);
    expect(removed.stdout).toContain("--reload");
    expect(readFileSync(file, "utf8")).not.toContain("RATE_LIMIT_RPM");
    expect((await run("get", "RATE_LIMIT_RPM")).stdout).not.toBe("60\n");
    expect((await run("get", "DEFAULT_ALPHA_MODEL")).stdout).toBe("gpt-4o\n");
    const again = await run("unset", "RATE_LIMIT_RPM");
    expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 0, stdout: `RATE_LIMIT_RPM was not set in ${file}\n` });
  });

  test("an alias names its setting; the environment still setting it is noted", async () => {
    const user = userDir();
    await runCli(["config", "set", "BETA_REGION", "eu-west-1"], { cwd: user.dir, env: user.env });
    const { stdout, stderr, code } = await runCli(["config", "unset", "AWS_REGION"], { cwd: user.dir, env: { ...user.env, BETA_REGION: "us-east-1" } });
    expect(code).toBe(0);
    expect(stdout).toContain("BETA_REGION removed from");
    expect(stderr).toContain("BETA_REGION is still set in the environment");
  });

  test("an unknown name exits 2 with the closest setting, and the file is left as it was", async () => {
    const user = userDir();
    await runCli(["config", "set", "API_KEY", "sk-kept-in-the-file-0123"], { cwd: user.dir, env: user.env });
    const { stdout, stderr, code } = await runCli(["config", "unset", "API_KY"], { cwd: user.dir, env: user.env });
    expect({ stdout, code }).toEqual({ stdout: "", code: 2 });
    expect(stderr).toContain("API_KY is not a parley setting; did you mean API_KEY?");
    expect((await runCli(["config", "get", "API_KEY"], { cwd: user.dir, env: user.env })).stdout).toBe("sk-kept-in-the-file-0123\n");
  });
});
