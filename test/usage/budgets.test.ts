import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { testApp } from "../lib/app.ts";
import { startRedis } from "../lib/redis.ts";
import { eventually } from "./lib.ts";

const openai = await startFakeOpenAI();
const redis = await startRedis();
afterAll(async () => {
  openai.stop();
  await redis.stop();
});

const CI_KEY = "sk-ci-key-000000000001";
const OTHER_KEY = "sk-other-key-0000000001";
// The fake OpenAI answers every request with 11 input and 7 output tokens: 18 tokens, and
// 11 × $0.15 + 7 × $0.60 per million = $0.00000585 with gpt-4o-mini.
const gateway = (keys: string, env: Record<string, string> = {}) =>
  testApp({ RATE_LIMIT_RPM: "0", ALPHA_API_KEY: "sk-up", ALPHA_BASE_URL: openai.url, API_KEYS: keys, ...env });
const ask = (app: ReturnType<typeof gateway>, key: string, model = "gpt-4o-mini") =>
  app.json("/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }] }, { key });

function secondsToMidnight(): number {
  const now = Date.now() / 1000;
  return Math.ceil(86_400 - (now % 86_400));
}

/** The tokens a refusal reports as spent today, or 0 when the request passed (and failed upstream, spending nothing). */
async function usedWhenRefused(app: ReturnType<typeof gateway>): Promise<number> {
  const response = await ask(app, CI_KEY, "mock/error-503");
  const text = await response.text();
  return response.status === 429 ? Number(/\((\d+) tokens today\)/.exec(text)![1]) : 0;
}

async function expectOverBudget(response: Response, budget: RegExp) {
  expect(response.status).toBe(429);
  const body = await response.json();
  expect(body.error.type).toBe("rate_limit_error");
  expect(body.error.message).toMatch(budget);
  expect(body.error.message).toContain("00:00 UTC");
  const retryAfter = Number(response.headers.get("retry-after"));
  expect(Math.abs(retryAfter - secondsToMidnight())).toBeLessThanOrEqual(2);
}

describe("daily budgets per key (contract 12)", () => {
  test("tokens: requests pass while under the budget, then 429 naming it until 00:00 UTC; other keys go on", async () => {
    const app = gateway(`ci=${CI_KEY}:chat+models@30tokens/day,${OTHER_KEY}:chat`);
    expect((await ask(app, CI_KEY)).status).toBe(200); // 18 tokens
    expect((await ask(app, CI_KEY)).status).toBe(200); // 36: this one crossed it
    await expectOverBudget(await ask(app, CI_KEY), /key 'ci' \(30 tokens a day\) is used up \(36 tokens today\)/);
    expect((await ask(app, OTHER_KEY)).status).toBe(200);
    expect((await ask(app, "sk-test-0123456789abcdef")).status).toBe(200);
    // Other endpoints of the key still work: a budget is about completions.
    expect((await app.call("/v1/models", { key: CI_KEY })).status).toBe(200);
  });

  test("dollars: only priced models count; over the budget the answer is 429", async () => {
    const app = gateway(`${CI_KEY}:chat@0.00001usd/day`);
    const label = `key-${new Bun.CryptoHasher("sha256").update(CI_KEY).digest("hex").slice(0, 8)}`;
    expect((await ask(app, CI_KEY, "mock")).status).toBe(200);
    expect((await ask(app, CI_KEY)).status).toBe(200); // $0.00000585
    expect((await ask(app, CI_KEY)).status).toBe(200); // $0.0000117: crossed
    await expectOverBudget(await ask(app, CI_KEY), new RegExp(`key '${label}' \\(\\$0.00001 a day\\) is used up \\(\\$0.0000 today\\)`));
  });

  test("one budget across the processes sharing a data directory (SQLite)", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "parley-budget-")), "data");
    const env = { PARLEY_DATA_DIR: dataDir, UPSTREAM_RETRIES: "0" };
    const first = gateway(`ci=${CI_KEY}:chat@30tokens/day`, env);
    const second = gateway(`ci=${CI_KEY}:chat@30tokens/day`, env);
    expect((await ask(second, CI_KEY)).status).toBe(200); // 18 tokens
    expect((await ask(first, CI_KEY)).status).toBe(200); // 18 more
    // Each spent 18, under the budget on its own: each learns of the other's within a second or two
    // (how soon the second still passes depends on how fast this machine got here, so it is not asserted).
    await eventually(async () => (await usedWhenRefused(second)) === 36);
    await eventually(async () => (await usedWhenRefused(first)) === 36);
  });

  test("with REDIS_URL the budget lives in Redis, shared by every gateway", async () => {
    const env = { REDIS_URL: redis.url, UPSTREAM_RETRIES: "0" };
    const first = gateway(`ci=${CI_KEY}:chat@40tokens/day`, env);
    const second = gateway(`ci=${CI_KEY}:chat@40tokens/day`, env);
    expect((await ask(first, CI_KEY)).status).toBe(200);
    expect((await ask(second, CI_KEY)).status).toBe(200);
    expect((await ask(first, CI_KEY)).status).toBe(200); // 54 tokens in all
    const client = await redis.client();
    const counter = `parley:budget:ci:${new Date().toISOString().slice(0, 10)}:tokens`;
    await eventually(async () => Number(await client.get(counter)) === 54);
    expect(await client.ttl(counter)).toBeGreaterThan(86_400);
    client.close();
    // The second has spent 18 itself: refused with 54 means it counted the first's too.
    await eventually(async () => (await usedWhenRefused(second)) === 54);
  });

  test("Redis down: RATE_LIMIT_ON_REDIS_ERROR=closed refuses with 503, open lets requests through", async () => {
    const down = "redis://127.0.0.1:1";
    const closed = gateway(`ci=${CI_KEY}:chat@40tokens/day`, { REDIS_URL: down, RATE_LIMIT_ON_REDIS_ERROR: "closed" });
    const refused = await ask(closed, CI_KEY);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    const open = gateway(`ci=${CI_KEY}:chat@40tokens/day`, { REDIS_URL: down });
    expect((await ask(open, CI_KEY)).status).toBe(200);
    // The count it could not write waits for the next flush (once a second), and nothing spins meanwhile.
    await Bun.sleep(1500);
    expect((await ask(open, CI_KEY)).status).toBe(200);
  });
});
