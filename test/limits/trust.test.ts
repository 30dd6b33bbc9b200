import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { TEST_KEY } from "../lib/app.ts";
import { runCli, startCli, userDir } from "../lib/cli.ts";

/** Contract 25: the working directory's .env and parley.toml are used only once trusted. */

/** A user with their own key in the user config file, in a cloned folder that points elsewhere. */
function clonedRepo() {
  const user = userDir();
  const { PARLEY_TRUST_CWD: _, ...env } = user.env as Record<string, string | undefined>;
  writeFileSync(join(user.dir, ".env"), "ALPHA_BASE_URL=http://127.0.0.1:9/v1\nPORT=8123\n");
  writeFileSync(join(user.dir, "parley.toml"), `[upstreams.repo]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nheaders = { "x-token" = "\${GITHUB_TOKEN}" }\nmodels = ["m"]\n`);
  return { dir: user.dir, env: { ...env, API_KEY: TEST_KEY, ALPHA_API_KEY: "sk-users-own-openai-key-0001", GITHUB_TOKEN: "ghp_users_own_token_0001" } as Record<string, string | undefined> };
}

test("an untrusted folder's .env and parley.toml are not read, and serve says so in one line each", async () => {
  const repo = clonedRepo();
  const server = await startCli([], { cwd: repo.dir, env: repo.env });
  try {
    await server.waitFor(/parley\.toml is not trusted/);
    const output = server.output();
    expect(output).toMatch(/\.env is not trusted, so parley did not read it: run `parley trust`/);
    expect(output).toMatch(/parley\.toml is not trusted, so parley did not read it: run `parley trust`/);
    // Not read: alpha still points at OpenAI, and no upstream named repo exists.
    const shown = await runCli(["config", "show"], { cwd: repo.dir, env: repo.env });
    expect(shown.stdout).toMatch(/ALPHA_BASE_URL\s+https:\/\/api\.openai\.com\/v1/);
    expect(shown.stdout).not.toContain("8123");
    const upstreams = await runCli(["upstreams"], { cwd: repo.dir, env: repo.env });
    expect(upstreams.stdout).not.toContain("repo");
  } finally {
    await server.stop();
  }
});

test("parley trust records the files; a trusted folder is read, with a warning naming the file and the borrowed keys; a change needs trusting again", async () => {
  const repo = clonedRepo();
  const trusted = await runCli(["trust"], { cwd: repo.dir, env: repo.env });
  expect(trusted.code).toBe(0);
  expect(trusted.stdout).toContain(".env");
  const shown = await runCli(["config", "show"], { cwd: repo.dir, env: repo.env });
  expect(shown.stdout).toMatch(/ALPHA_BASE_URL\s+http:\/\/127\.0\.0\.1:9\/v1\s+\[\.env\]/);
  const server = await startCli([], { cwd: repo.dir, env: { ...repo.env, PORT: "0" } });
  try {
    await server.waitFor(/GITHUB_TOKEN \(from the environment\)/);
    expect(server.output()).toMatch(/\.env sets ALPHA_BASE_URL, so ALPHA_API_KEY \(from the environment\) goes to http:\/\/127\.0\.0\.1:9\/v1/);
    expect(server.output()).toMatch(/parley\.toml puts GITHUB_TOKEN \(from the environment\) into the upstreams it declares/);
  } finally {
    await server.stop();
  }
  writeFileSync(join(repo.dir, ".env"), "ALPHA_BASE_URL=http://127.0.0.1:10/v1\n");
  const changed = await runCli(["config", "show"], { cwd: repo.dir, env: repo.env });
  expect(changed.stdout).toMatch(/ALPHA_BASE_URL\s+https:\/\/api\.openai\.com\/v1/);
});

test("PARLEY_TRUST_CWD=1 reads the folder's files without asking, PARLEY_TRUST_CWD=0 never does, and a .env cannot set it for itself", async () => {
  const repo = clonedRepo();
  const always = await runCli(["config", "show"], { cwd: repo.dir, env: { ...repo.env, PARLEY_TRUST_CWD: "1" } });
  expect(always.stdout).toMatch(/ALPHA_BASE_URL\s+http:\/\/127\.0\.0\.1:9\/v1/);
  await runCli(["trust"], { cwd: repo.dir, env: repo.env });
  const never = await runCli(["config", "show"], { cwd: repo.dir, env: { ...repo.env, PARLEY_TRUST_CWD: "0" } });
  expect(never.stdout).toMatch(/ALPHA_BASE_URL\s+https:\/\/api\.openai\.com\/v1/);
  const other = userDir();
  writeFileSync(join(other.dir, ".env"), "PARLEY_TRUST_CWD=1\nALPHA_BASE_URL=http://127.0.0.1:9/v1\n");
  const { PARLEY_TRUST_CWD: _, ...env } = other.env as Record<string, string | undefined>;
  const self = await runCli(["config", "show"], { cwd: other.dir, env });
  expect(self.stdout).toMatch(/ALPHA_BASE_URL\s+https:\/\/api\.openai\.com\/v1/);
});

test("a file named explicitly is trusted", async () => {
  const repo = clonedRepo();
  const named = await runCli(["upstreams"], { cwd: repo.dir, env: { ...repo.env, PARLEY_UPSTREAMS: join(repo.dir, "parley.toml") } });
  expect(named.stdout).toContain("repo");
});
