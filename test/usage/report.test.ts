import { afterAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { runCli } from "../lib/cli.ts";
import { startGateway } from "../lib/gateway.ts";

const TEAM_KEY = "sk-team-key-0000000001";
const UNNAMED_KEY = "sk-unnamed-key-000000001";
const gateway = await startGateway({ RATE_LIMIT_RPM: "0", MODEL_ROUTES: "my-*=alpha", API_KEYS: `team=${TEAM_KEY}:chat,${UNNAMED_KEY}:chat+usage` });
afterAll(() => gateway.stop());
const unnamedLabel = `key-${new Bun.CryptoHasher("sha256").update(UNNAMED_KEY).digest("hex").slice(0, 8)}`;
const ask = (model: string, key?: string, tag?: string) =>
  gateway.json("/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }] }, { key, headers: tag ? { "x-parley-tag": tag } : {} });

await ask("gpt-4o-mini", undefined, "conversation-1");
await ask("gpt-4o-mini", TEAM_KEY, "conversation-1");
await ask("anthropic.claude-3-5-haiku-20241022-v1:0", UNNAMED_KEY);
await ask("my-model", TEAM_KEY);

const ROW = { requests: expect.any(Number), input_tokens: expect.any(Number), output_tokens: expect.any(Number), cache_read_tokens: 0, cache_write_tokens: 0 };

describe("GET /v1/usage (contract 12)", () => {
  test("by model (the default): exactly the contract's shape, busiest first, null cost for a model without a price", async () => {
    const response = await gateway.call("/v1/usage?since=7d");
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(Object.keys(body)).toEqual(["object", "since", "by", "data"]);
    expect(body).toMatchObject({ object: "list", by: "model" });
    expect(Math.abs(body.since - (Date.now() / 1000 - 7 * 86_400))).toBeLessThan(5);
    expect(body.data).toEqual([
      { group: "gpt-4o-mini", ...ROW, requests: 2, input_tokens: 22, output_tokens: 14, cost_usd: 0.0000117 },
      { group: "anthropic.claude-3-5-haiku-20241022-v1:0", ...ROW, requests: 1, input_tokens: 13, output_tokens: 5, cost_usd: 0.0000304 },
      { group: "my-model", ...ROW, requests: 1, cost_usd: null },
    ]);
    for (const row of body.data) expect(Object.keys(row)).toEqual(["group", "requests", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd"]);
  });

  test("by key (labels, never keys), by day, by tag", async () => {
    const byKey = await (await gateway.call("/v1/usage?by=key")).json();
    expect(byKey.data.map((r: { group: string; requests: number }) => [r.group, r.requests])).toEqual([["team", 2], [unnamedLabel, 1], ["main", 1]]);
    const byDay = await (await gateway.call("/v1/usage?by=day")).json();
    expect(byDay.data).toEqual([{ group: new Date().toISOString().slice(0, 10), ...ROW, requests: 4, cost_usd: expect.any(Number) }]);
    const byTag = await (await gateway.call("/v1/usage?by=tag&since=1h")).json();
    expect(byTag.data.find((r: { group: string }) => r.group === "conversation-1")).toMatchObject({ requests: 2, cost_usd: 0.0000117 });
    expect(byTag.data.find((r: { group: string | null }) => r.group === null)).toMatchObject({ requests: 2 });
    const byUpstream = await (await gateway.call("/v1/usage?by=upstream")).json();
    expect(byUpstream.data.map((r: { group: string; requests: number }) => [r.group, r.requests])).toEqual([["alpha", 3], ["beta", 1]]);
    const cli = await runCli(["usage", "--by", "upstream", "--json"], { env: { ...process.env, PARLEY_DATA_DIR: gateway.config.dataDir, PARLEY_CONFIG_DIR: gateway.config.configDir } });
    expect(JSON.parse(cli.stdout).data).toEqual(byUpstream.data);
    const future = await (await gateway.call(`/v1/usage?since=${Math.floor(Date.now() / 1000) + 60}`)).json();
    expect(future.data).toEqual([]);
  });

  test("needs the usage scope; bad since or by is a 422 naming the field", async () => {
    expect((await gateway.call("/v1/usage", { key: TEAM_KEY })).status).toBe(403);
    expect((await gateway.call("/v1/usage", { key: UNNAMED_KEY })).status).toBe(200);
    const since = await gateway.call("/v1/usage?since=yesterday");
    expect(since.status).toBe(422);
    expect((await since.json()).error.details).toMatch(/^since: 7d, 12h/);
    const by = await gateway.call("/v1/usage?by=constructor");
    expect(by.status).toBe(422);
    expect((await by.json()).error.details).toBe("by: one of model, upstream, key, day, tag, route, session");
  });
});

describe("parley usage", () => {
  const env = { ...process.env, PARLEY_DATA_DIR: gateway.config.dataDir, PARLEY_CONFIG_DIR: gateway.config.configDir };

  test("--json prints what GET /v1/usage answers", async () => {
    const api = await (await gateway.call("/v1/usage?by=key")).json();
    const { stdout, code } = await runCli(["usage", "--by", "key", "--json"], { env });
    expect(code).toBe(0);
    expect({ ...JSON.parse(stdout), since: 0 }).toEqual({ ...api, since: 0 });
  });

  test("a table with a total line; an unpriced model's cost is -", async () => {
    await gateway.call("/v1/usage");
    const { stdout, code } = await runCli(["usage", "--since", "1d"], { env });
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^Usage since \d{4}-\d\d-\d\d \d\d:\d\d UTC, by model$/);
    expect(lines[1]).toMatch(/^model\s+requests\s+input\s+output\s+cache read\s+cache write\s+cost \(USD\)$/);
    expect(lines[3]).toMatch(/^gpt-4o-mini\s+2\s+22\s+14\s+0\s+0\s+\$0\.0000$/);
    expect(lines[5]).toMatch(/^my-model\s+1\s+11\s+7\s+0\s+0\s+-$/);
    expect(lines.at(-1)).toMatch(/^total\s+4\s+46\s+26\s+0\s+0\s+\$0\.0000$/);
  });

  test("no records: says so; a bad --since or --by: one line, exit 2", async () => {
    const empty = await runCli(["usage"], { env: { ...env, PARLEY_DATA_DIR: `${gateway.config.dataDir}-empty` } });
    expect(empty.stdout).toMatch(/^No usage since .* UTC\.\n$/);
    const since = await runCli(["usage", "--since", "soon"], { env });
    expect([since.code, since.stderr]).toEqual([2, 'parley: --since "soon" is not a time: use 7d, 12h, 30m, a date such as 2026-01-31 (UTC), or Unix seconds\n']);
    const by = await runCli(["usage", "--by", "user"], { env });
    expect([by.code, by.stderr]).toEqual([2, 'parley: --by "user": use one of model, upstream, key, day, tag, route, session\n']);
  });
});

describe("API_KEYS names and budgets (contract 12)", () => {
  const load = (API_KEYS: string) => loadConfig({ env: { API_KEYS }, cwd: "/" }).config.apiKeys;

  test("[name=]key:scopes[@<N>tokens/day|@<N>usd/day]", () => {
    expect(load("ci=sk-ci-0123456789abc:chat+models@200000tokens/day,sk-x-0123456789abcd:files:read+usage,ops=sk-o-0123456789abcd:metrics@2.5usd/day")).toEqual([
      { name: "ci", key: "sk-ci-0123456789abc", scopes: ["chat", "models"], budget: { amount: 200000, unit: "tokens" } },
      { key: "sk-x-0123456789abcd", scopes: ["files:read", "usage"] },
      { name: "ops", key: "sk-o-0123456789abcd", scopes: ["metrics"], budget: { amount: 2.5, unit: "usd" } },
    ]);
  });

  test.each([
    ["sk-a:chat@100/day", "no unit"],
    ["sk-a:chat@0tokens/day", "a zero budget"],
    ["sk-a:chat@5tokens/week", "not per day"],
    ["main=sk-a:chat", "the name main"],
    ["key-1234abcd=sk-a:chat", "a name like a generated label"],
    ["a=sk-a:chat,a=sk-b:chat", "a name twice"],
    ["a b=sk-a:chat", "a space in the name"],
  ])("%s is refused at load (%s)", (value) => {
    expect(() => load(value)).toThrow(/API_KEYS=.*\[name=\]key:scope\+scope\[@<N>tokens\/day\|@<N>usd\/day\]/);
  });
});
