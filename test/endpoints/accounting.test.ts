/**
 * What every endpoint has, for /v1/embeddings and /v1/completions: the `chat` scope, rate limits,
 * budgets, usage records with cost, the request log and /docs.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/log.ts";
import type { AccessEntry } from "../../src/server/access-log.ts";
import { createApp } from "../../src/server/app.ts";
import { testApp, testConfig, TEST_KEY } from "../lib/app.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { recordsOf } from "../usage/lib.ts";

const openai = await startFakeOpenAI();
afterAll(() => openai.stop());

const CHAT_KEY = "sk-chat-only-key-00001";
const MODELS_KEY = "sk-models-only-key-0001";
const upstream = { ALPHA_API_KEY: "sk-up", ALPHA_BASE_URL: openai.url };
/** Ten words: the fake counts ten tokens. */
const TEN = "one two three four five six seven eight nine ten";
const EMBED = { model: "text-embedding-3-small", input: TEN };
const COMPLETE = { model: "gpt-3.5-turbo-instruct", prompt: "def f(", suffix: "\n" };

describe("keys and limits", () => {
  test("the chat scope opens both endpoints; a models-only key gets 403", async () => {
    const app = testApp({ ...upstream, RATE_LIMIT_RPM: "0", API_KEYS: `${CHAT_KEY}:chat,${MODELS_KEY}:models` });
    for (const [path, body] of [["/v1/embeddings", EMBED], ["/v1/completions", COMPLETE]] as const) {
      expect((await app.json(path, body, { key: CHAT_KEY })).status).toBe(200);
      const refused = await app.json(path, body, { key: MODELS_KEY });
      expect(refused.status).toBe(403);
      expect((await refused.json()).error.message).toContain("chat");
    }
  });

  test("the rate limit counts them", async () => {
    const app = testApp({ ...upstream, RATE_LIMIT_RPM: "2" });
    expect((await app.json("/v1/embeddings", EMBED)).status).toBe(200);
    expect((await app.json("/v1/completions", COMPLETE)).status).toBe(200);
    const limited = await app.json("/v1/embeddings", EMBED);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).not.toBeNull();
  });

  test("embedding tokens spend a key's daily budget", async () => {
    const app = testApp({ ...upstream, RATE_LIMIT_RPM: "0", API_KEYS: `ci=${CHAT_KEY}:chat@20tokens/day` });
    expect((await app.json("/v1/embeddings", EMBED, { key: CHAT_KEY })).status).toBe(200); // 10 tokens
    expect((await app.json("/v1/embeddings", EMBED, { key: CHAT_KEY })).status).toBe(200); // 20: used up
    const over = await app.json("/v1/embeddings", EMBED, { key: CHAT_KEY });
    expect(over.status).toBe(429);
    expect((await over.json()).error.message).toContain("(20 tokens today)");
  });
});

describe("usage records", () => {
  test("embeddings and completions, streamed and not, each a record with tokens and cost", async () => {
    const app = testApp({ ...upstream, RATE_LIMIT_RPM: "0" });
    const tag = (t: string) => ({ headers: { "x-parley-tag": t } });
    expect((await app.json("/v1/embeddings", EMBED, tag("embed"))).status).toBe(200);
    expect((await app.json("/v1/embeddings", { model: "mock", input: TEN }, tag("embed-mock"))).status).toBe(200);
    expect((await app.json("/v1/completions", COMPLETE, tag("complete"))).status).toBe(200);
    const streamed = await app.json("/v1/completions", { ...COMPLETE, stream: true, stream_options: { include_usage: true } }, tag("complete-stream"));
    await streamed.text();
    const records = await recordsOf(app.config, () => app.call("/v1/usage"));
    const of = (t: string) => records.find((r) => r.tag === t)!;
    expect(of("embed")).toMatchObject({ endpoint: "/v1/embeddings", model: "text-embedding-3-small", provider: "alpha", input_tokens: 10, output_tokens: 0, status: 200, outcome: "ok" });
    expect(of("embed").cost_usd!).toBeCloseTo(10 * 0.02 / 1e6, 12);
    expect(of("embed-mock")).toMatchObject({ endpoint: "/v1/embeddings", provider: "mock", input_tokens: 12, output_tokens: 0, cost_usd: 0 });
    expect(of("complete")).toMatchObject({ endpoint: "/v1/completions", model: "gpt-3.5-turbo-instruct", input_tokens: 11, output_tokens: 7 });
    expect(of("complete").cost_usd!).toBeCloseTo((11 * 1.5 + 7 * 2) / 1e6, 12);
    expect(of("complete-stream")).toMatchObject({ endpoint: "/v1/completions", input_tokens: 11, output_tokens: 7, outcome: "ok" });
  });
});

describe("the request log and /docs", () => {
  test("one line per request, with the model and the upstream", async () => {
    const entries: AccessEntry[] = [];
    const config = testConfig({ ...upstream, RATE_LIMIT_RPM: "0", LOG_LEVEL: "info" });
    const app = createApp({ config, log: createLogger("silent"), accessLog: (entry) => entries.push(entry) });
    const post = (path: string, body: object) => app.handle(new Request(`http://localhost${path}`, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" }, body: JSON.stringify(body) }));
    expect((await post("/v1/embeddings", EMBED)).status).toBe(200);
    expect((await post("/v1/completions", { model: "mock", prompt: "x" })).status).toBe(200);
    expect(entries.map(({ url, status, model, provider }) => ({ path: new URL(url).pathname, status, model, provider }))).toEqual([
      { path: "/v1/embeddings", status: 200, model: "text-embedding-3-small", provider: "alpha" },
      { path: "/v1/completions", status: 200, model: "mock", provider: "mock" },
    ]);
    await app.close();
  });

  test("/docs lists both endpoints", async () => {
    const app = testApp();
    const spec = await (await app.call("/docs/json", { key: null })).json();
    expect(spec.paths["/v1/embeddings"].post.summary).toBe("Embeddings");
    expect(spec.paths["/v1/completions"].post.requestBody.content["application/json"].schema.properties).toHaveProperty("suffix");
  });
});
