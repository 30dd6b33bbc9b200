import { afterAll, expect, test } from "bun:test";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { allText, tempDir } from "../cassettes/lib.ts";
import { testApp } from "../lib/app.ts";
import { runCli, userDir } from "../lib/cli.ts";

/** Contract 25: secrets are masked by value, not by name, wherever parley writes text. */
const UPSTREAM_KEY = "sk-upstream-quoted-back-7f3a9c1e";
const TENANT_PASS = "tenant-pass-0a1b2c3d4e";
const UPSTREAM_BEARER = "upstream-bearer-9z8y7x6w";
const CODE = "function-code-5e6f7a8b9c";
const PASSWORD = "hunter2-base-url-password";

/** An OpenAI-compatible server that answers a 400 quoting the key it was sent, as some do. */
const quoting = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(request) {
    const key = request.headers.get("authorization")?.slice(7) ?? "";
    if (request.headers.get("x-quote") === "no") return Response.json({ id: "chatcmpl-1", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }] });
    return Response.json({ error: { message: `The key ${key} has no access to this model.`, type: "invalid_request_error" } }, { status: 400 });
  },
});
afterAll(() => quoting.stop(true));
const url = `http://127.0.0.1:${quoting.port}/v1`;

test("an upstream 4xx quoting parley's key reaches the client masked", async () => {
  const { json } = testApp({ ALPHA_BASE_URL: url, ALPHA_API_KEY: UPSTREAM_KEY, UPSTREAM_RETRIES: "0", DEBUG: "true" });
  const response = await json("/v1/chat/completions", { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
  expect(response.status).toBe(400);
  const text = await response.text();
  expect(text).toContain("has no access");
  expect(text).not.toContain(UPSTREAM_KEY);
  expect(text).toContain("****");
});

test("an anthropic upstream's base_url password never reaches a client", async () => {
  const dir = tempDir();
  const file = join(dir, "parley.toml");
  writeFileSync(file, `[upstreams.claude]\nkind = "anthropic"\nbase_url = "http://admin:${PASSWORD}@127.0.0.1:1"\napi_key = "sk-ant-unused-0000000000"\nmodels = ["claude-x"]\n`);
  const { json } = testApp({ PARLEY_UPSTREAMS: file, UPSTREAM_RETRIES: "0", DEBUG: "true" });
  const response = await json("/v1/messages", { model: "claude-x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] });
  expect(response.status).toBeGreaterThanOrEqual(500);
  expect(await response.text()).not.toContain(PASSWORD);
});

test("a cassette keeps no secret, whatever header or query name carries it", async () => {
  const dir = tempDir();
  const file = join(dir, "parley.toml");
  writeFileSync(file, `[upstreams.tenant]\nkind = "openai"\nbase_url = "${url}"\napi_key = "${UPSTREAM_KEY}"\nquery = { "code" = "${CODE}", "api-version" = "2024-10-21" }\nheaders = { "X-Tenant-Pass" = "${TENANT_PASS}", "X-Upstream-Bearer" = "${UPSTREAM_BEARER}", "x-quote" = "no" }\nmodels = ["m"]\n`);
  const cassettes = join(dir, "cassettes");
  const recorder = testApp({ PARLEY_UPSTREAMS: file, PARLEY_CASSETTES: cassettes, PARLEY_CASSETTE_MODE: "record" });
  const response = await recorder.json("/v1/chat/completions", { model: "tenant/m", messages: [{ role: "user", content: "hi" }] });
  expect(response.status).toBe(200);
  await response.text();
  await recorder.app.close();
  const text = allText(cassettes);
  expect(text).toContain("2024-10-21");
  for (const secret of [UPSTREAM_KEY, TENANT_PASS, UPSTREAM_BEARER, CODE]) expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false });
  expect((statSync(join(cassettes, "default.har")).mode & 0o777).toString(8)).toBe("600");
});

test("config show prints no password from a URL it cannot parse", async () => {
  const user = userDir();
  const bad = `http://user:${PASSWORD}@[not-a-host/v1`;
  const shown = await runCli(["config", "show"], { cwd: user.dir, env: { ...user.env, ALPHA_BASE_URL: bad } });
  expect(shown.stdout + shown.stderr).toContain("ALPHA_BASE_URL");
  expect(shown.stdout + shown.stderr).not.toContain(PASSWORD);
  const odd = `http://user:${PASSWORD}/with@slash@localhost:9/v1`;
  const listed = await runCli(["config", "show"], { cwd: user.dir, env: { ...user.env, ALPHA_BASE_URL: odd } });
  expect(listed.stdout + listed.stderr).not.toContain("with@slash");
  expect(listed.stdout + listed.stderr).not.toContain(PASSWORD);
});

test("parley upstreams prints no header value of an upstream, whatever its name", async () => {
  const user = userDir();
  writeFileSync(join(user.dir, "parley.toml"), `[upstreams.tenant]\nkind = "openai"\nbase_url = "http://admin:${PASSWORD}@127.0.0.1:9/v1"\nheaders = { "X-Tenant-Pass" = "${TENANT_PASS}" }\nmodels = ["m"]\n`);
  const listed = await runCli(["upstreams"], { cwd: user.dir, env: { ...user.env, PARLEY_UPSTREAMS: join(user.dir, "parley.toml") } });
  expect(listed.stdout).toContain("tenant");
  for (const secret of [PASSWORD, TENANT_PASS]) expect(listed.stdout + listed.stderr).not.toContain(secret);
});
