import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../../src/log.ts";
import type { AccessEntry } from "../../src/server/access-log.ts";
import { createApp } from "../../src/server/app.ts";
import { TEST_KEY, testConfig } from "../lib/app.ts";
import { runCli, startCli, userDir } from "../lib/cli.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { recordsOf } from "../usage/lib.ts";
import { writeToml } from "./fleet.ts";

const ollama = await startFakeOpenAI();
const cloud = await startFakeOpenAI();
afterAll(() => {
  ollama.stop();
  cloud.stop();
});

/** Claude Code's background calls (its haiku model, by its user agent) to a local model; the rest of Claude to the cloud. */
const TOML = `[upstreams.ollama]
kind = "openai"
base_url = "${ollama.url}"

[upstreams.cloud]
kind = "openai"
base_url = "${cloud.url}"

[[routes]]
name = "background"
match = "claude-haiku-*"
model = "qwen2.5-coder:7b"
to = ["ollama"]
when = { header = { user-agent = "claude-cli/*" } }

[[routes]]
match = "claude-*"
to = ["cloud"]
`;

const CLAUDE_CODE = { "user-agent": "claude-cli/2.0.14 (external, cli)" };
const haiku = { model: "claude-haiku-4-5", max_tokens: 64, messages: [{ role: "user", content: "a title for this" }] };

/** parley in process over `dataDir`, its request log entries kept. */
function gateway(dataDir?: string) {
  const { file } = writeToml(TOML);
  const config = testConfig({ PARLEY_UPSTREAMS: file, ...(dataDir ? { PARLEY_DATA_DIR: dataDir } : {}) });
  const entries: AccessEntry[] = [];
  const app = createApp({ config, log: createLogger("silent"), accessLog: (entry) => entries.push(entry) });
  const call = (path: string, init: RequestInit = {}) =>
    app.handle(new Request(`http://localhost${path}`, { ...init, headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", ...init.headers } }));
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) => call(path, { method: "POST", body: JSON.stringify(body), headers });
  return { config, entries, call, post };
}

describe("the route is named in the request log and the usage record (contract 15)", () => {
  test("the log entry, the record's route column, /v1/usage?by=route and parley usage --by route", async () => {
    const { config, entries, call, post } = gateway();
    const background = await post("/v1/messages", haiku, CLAUDE_CODE);
    expect(background.headers.get("x-parley-route")).toBe("background");
    await background.text();
    const streamed = await post("/v1/messages", { ...haiku, stream: true }, CLAUDE_CODE);
    await streamed.text();
    // The same model from another client: the second route, by its place.
    const other = await post("/v1/messages", haiku);
    expect([other.headers.get("x-parley-route"), other.headers.get("x-parley-upstream")]).toEqual(["2", "cloud"]);
    await other.text();
    // No route at all.
    await (await post("/v1/chat/completions", { model: "mock/echo", messages: [{ role: "user", content: "hi" }] })).text();

    expect(entries.map((e) => [e.provider, e.route])).toEqual([["ollama", "background"], ["ollama", "background"], ["cloud", "2"], ["mock", undefined]]);
    const records = await recordsOf(config, () => call("/v1/usage"));
    expect(records.map((r) => [r.provider, r.route])).toEqual([["ollama", "background"], ["ollama", "background"], ["cloud", "2"], ["mock", null]]);

    const byRoute = await (await call("/v1/usage?by=route")).json();
    expect(byRoute.data.map((r: { group: string | null; requests: number }) => [r.group, r.requests])).toEqual([["background", 2], ["-", 1], ["2", 1]]);
    const env = { ...process.env, PARLEY_DATA_DIR: config.dataDir, PARLEY_CONFIG_DIR: config.configDir };
    const cli = await runCli(["usage", "--by", "route", "--json"], { env });
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout).data).toEqual(byRoute.data);
    const table = await runCli(["usage", "--by", "route"], { env });
    expect(table.stdout).toMatch(/\nbackground\s+2\s/);
  });

  test("a database an older parley wrote gains the route column; its rows keep a null route", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "parley-old-db-"));
    mkdirSync(dataDir, { recursive: true });
    const old = new Database(join(dataDir, "parley.db"), { create: true });
    old.run(`CREATE TABLE usage (
      time INTEGER NOT NULL, endpoint TEXT NOT NULL, key_label TEXT NOT NULL, model_requested TEXT, model TEXT, provider TEXT,
      input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER, cost_usd REAL,
      status INTEGER NOT NULL, outcome TEXT NOT NULL, latency_ms INTEGER NOT NULL, ttft_ms INTEGER, attempts INTEGER NOT NULL, tag TEXT)`);
    old.run(`INSERT INTO usage VALUES (${Date.now() - 1000}, '/v1/messages', 'main', 'claude-haiku-4-5', 'claude-haiku-4-5', 'cloud', 1, 2, 0, 0, NULL, 200, 'ok', 5, NULL, 1, NULL)`);
    old.close();

    const { config, call, post } = gateway(dataDir);
    // Read before anything is written: the summary adds the column as well.
    expect((await (await call("/v1/usage?by=route")).json()).data.map((r: { group: string | null }) => r.group)).toEqual(["-"]);
    await (await post("/v1/messages", haiku, CLAUDE_CODE)).text();
    const records = await recordsOf(config, () => call("/v1/usage"));
    expect(records.map((r) => [r.model_requested, r.route])).toEqual([["claude-haiku-4-5", null], ["claude-haiku-4-5", "background"]]);
  });

  test("parley serve's request log line says route=<name>", async () => {
    const user = userDir();
    const { file } = writeToml(TOML);
    const server = await startCli(["--log-level", "info", "--upstreams", file], { cwd: user.dir, env: { ...user.env, API_KEY: TEST_KEY } });
    const headers = { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", ...CLAUDE_CODE };
    await (await fetch(`${server.url}/v1/messages`, { method: "POST", headers, body: JSON.stringify(haiku) })).text();
    await server.waitFor(/\/v1\/messages 200 /);
    const log = await server.stop();
    expect(log).toMatch(/POST \/v1\/messages 200 [\d.]+ms model=claude-haiku-4-5 provider=ollama route=background id=/);
  });
});
