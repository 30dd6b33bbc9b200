import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { startGateway, TEST_KEY } from "../lib/gateway.ts";
import { recordsOf } from "./lib.ts";

const gateway = await startGateway({ RATE_LIMIT_RPM: "0", UPSTREAM_RETRIES: "2", MODEL_ROUTES: "my-*=alpha" });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());
const records = () => recordsOf(gateway.config, () => gateway.call("/v1/usage"));

type Input = "alpha" | "beta_messages" | "beta_textgen";
const BODIES: Record<Input, (model: string, stream: boolean) => object> = {
  alpha: (model, stream) => ({ model, stream, ...(stream ? { stream_options: { include_usage: true } } : {}), messages: [{ role: "user", content: "Say hello secretly" }] }),
  beta_messages: (model, stream) => ({ anthropic_version: "bedrock-2023-05-31", model, max_tokens: 50, stream, messages: [{ role: "user", content: "Say hello secretly" }] }),
  beta_textgen: (model, stream) => ({ model, stream, inputText: "User: Say hello secretly\nBot:" }),
};
const UPSTREAMS = [
  { model: "gpt-4o-mini", provider: "alpha", usage: [11, 7], price: [0.15, 0.6] },
  { model: "anthropic.claude-3-5-haiku-20241022-v1:0", provider: "beta", usage: [13, 5], price: [0.8, 4] },
  { model: "amazon.titan-text-express-v1", provider: "beta", usage: [9, 4], price: [0.2, 0.6] },
  { model: "meta.llama3-1-70b-instruct-v1:0", provider: "beta", usage: [15, 6], price: [0.72, 0.72] },
] as const;

describe("a usage record for every completion (contract 12)", () => {
  for (const input of ["alpha", "beta_messages", "beta_textgen"] as const) {
    for (const upstream of UPSTREAMS) {
      for (const stream of [false, true]) {
        test(`${input} → ${upstream.model}, ${stream ? "stream" : "JSON"}`, async () => {
          const tag = `${input}-${upstream.model}-${stream}`;
          const response = await gateway.json("/v1/chat/completions", BODIES[input](upstream.model, stream), { headers: { "x-parley-tag": tag } });
          expect(response.status).toBe(200);
          const text = await response.text();
          expect(text).toContain("Hello");
          const [input_tokens, output_tokens] = upstream.usage;
          const cost = (input_tokens * upstream.price[0] + output_tokens * upstream.price[1]) / 1e6;
          if (!stream) expect(Number(response.headers.get("x-parley-cost-usd"))).toBeCloseTo(cost, 12);
          const record = (await records()).find((r) => r.tag === tag)!;
          expect(record).toMatchObject({
            endpoint: "/v1/chat/completions", key_label: "main", model_requested: upstream.model, model: upstream.model,
            provider: upstream.provider, input_tokens, output_tokens, cache_read_tokens: 0, cache_write_tokens: 0,
            status: 200, outcome: "ok", attempts: 1,
          });
          expect(record.cost_usd!).toBeCloseTo(cost, 12);
          expect(record.latency_ms).toBeGreaterThanOrEqual(0);
          expect(Math.abs(record.time - Date.now())).toBeLessThan(60_000);
          if (stream) expect(record.ttft_ms).toBeGreaterThanOrEqual(0);
          else expect(record.ttft_ms).toBeNull();
        });
      }
    }
  }

  test("the mock in each format, JSON and stream, with its tokens and a cost of 0", async () => {
    for (const input of ["alpha", "beta_messages", "beta_textgen"] as const) {
      for (const stream of [false, true]) {
        const tag = `mock-${input}-${stream}`;
        const response = await gateway.json("/v1/chat/completions", BODIES[input]("mock", stream), { headers: { "x-parley-tag": tag } });
        await response.text();
        const record = (await records()).find((r) => r.tag === tag)!;
        expect(record).toMatchObject({ model: "mock", provider: "mock", status: 200, outcome: "ok", cost_usd: 0 });
        expect(record.output_tokens).toBe(3);
        expect(record.input_tokens).toBeGreaterThan(0);
      }
    }
  });

  test("a passthrough stream that carries no usage is recorded with unknown tokens and cost", async () => {
    const response = await gateway.json("/v1/chat/completions", { model: "gpt-4o", stream: true, messages: [{ role: "user", content: "hi" }] }, { headers: { "x-parley-tag": "no-usage" } });
    await response.text();
    const record = (await records()).find((r) => r.tag === "no-usage")!;
    expect(record).toMatchObject({ model: "gpt-4o", input_tokens: null, output_tokens: null, cost_usd: null, outcome: "ok" });
  });

  test("Claude Code's session id is kept hashed as the session, never raw; the tag is x-parley-tag's alone; a model without a price costs null", async () => {
    const session = crypto.randomUUID();
    const response = await gateway.json("/v1/chat/completions", { model: "my-local-model", messages: [{ role: "user", content: "hi" }] }, { headers: { "x-claude-code-session-id": session } });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-parley-cost-usd")).toBeNull();
    const hashed = new Bun.CryptoHasher("sha256").update(session).digest("hex").slice(0, 16);
    const record = (await records()).find((r) => r.session === hashed)!;
    expect(record).toMatchObject({ model: "my-local-model", provider: "alpha", input_tokens: 11, output_tokens: 7, cost_usd: null, tag: null });
    expect((await records()).some((r) => JSON.stringify(r).includes(session))).toBe(false);
  });

  test("failures are recorded with their status and attempts", async () => {
    gateway.openai.next({ kind: "error", status: 503, message: "down" }, { kind: "error", status: 503, message: "down" }, { kind: "error", status: 503, message: "down" });
    const failed = await gateway.json("/v1/chat/completions", { model: "gpt-4o", messages: [{ role: "user", content: "x" }] }, { headers: { "x-parley-tag": "failed" } });
    expect(failed.status).toBe(503);
    expect((await records()).find((r) => r.tag === "failed")).toMatchObject({ status: 503, outcome: "error", attempts: 3, input_tokens: null, provider: "alpha" });
  });

  test("a stream the client leaves is recorded as cancelled", async () => {
    const server = gateway.listen();
    const controller = new AbortController();
    const response = await fetch(`${server}/v1/chat/completions`, {
      method: "POST", signal: controller.signal,
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", "x-parley-tag": "left" },
      body: JSON.stringify({ model: "mock/slow", stream: true, messages: [{ role: "user", content: "a b c d e f g h i j k l m n o p" }] }),
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    for (let i = 0; i < 100; i++) {
      if ((await records()).some((r) => r.tag === "left")) break;
      await Bun.sleep(50);
    }
    expect((await records()).find((r) => r.tag === "left")).toMatchObject({ outcome: "cancelled", status: 200, model: "mock/slow" });
  });

  test("a megabyte model id is recorded as its first 200 characters and its length, answered or not", async () => {
    const long = "x".repeat(1024 * 1024);
    for (const [tag, model, status] of [["long-unknown", long, 404], ["long-mock", `mock/${long}`, 200]] as const) {
      const response = await gateway.json("/v1/chat/completions", { model, messages: [{ role: "user", content: "x" }] }, { headers: { "x-parley-tag": tag } });
      expect(response.status).toBe(status);
      const record = (await records()).find((r) => r.tag === tag)!;
      const cut = `${model.slice(0, 200)}…(${model.length} characters)`;
      expect(record).toMatchObject({ status, model_requested: cut, model: cut });
    }
  });

  test("no message content and no key is ever written to the database", async () => {
    await records();
    const dir = gateway.config.dataDir;
    const bytes = readdirSync(dir).filter((f) => f.startsWith("parley.db")).map((f) => readFileSync(`${dir}/${f}`).toString("latin1")).join("");
    expect(bytes).toContain("/v1/chat/completions");
    expect(bytes).not.toContain("Say hello secretly");
    expect(bytes).not.toContain("Hello from");
    expect(bytes).not.toContain(TEST_KEY);
  });
});

describe("the native endpoints are recorded too", () => {
  const claude = "anthropic.claude-3-5-haiku-20241022-v1:0";
  const cases: [string, string, object, { model: string; provider: string; input_tokens: number; output_tokens: number }][] = [
    ["/v1/messages, lossless to Bedrock Claude", "/v1/messages", { model: claude, max_tokens: 50, messages: [{ role: "user", content: "hi" }] }, { model: claude, provider: "beta", input_tokens: 13, output_tokens: 5 }],
    ["/v1/messages, streamed", "/v1/messages", { model: claude, max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] }, { model: claude, provider: "beta", input_tokens: 13, output_tokens: 5 }],
    ["/v1/responses, converted to Bedrock Claude", "/v1/responses", { model: claude, input: "hi" }, { model: claude, provider: "beta", input_tokens: 13, output_tokens: 5 }],
    ["/v1/responses, to the mock, streamed", "/v1/responses", { model: "mock", input: "hi there", stream: true }, { model: "mock", provider: "mock", input_tokens: 2, output_tokens: 2 }],
  ];
  for (const [name, path, body, expected] of cases) {
    test(name, async () => {
      const tag = `native-${name}`;
      const response = await gateway.json(path, body, { headers: { "x-parley-tag": tag, "anthropic-version": "2023-06-01" } });
      expect(response.status).toBe(200);
      await response.text();
      expect((await records()).find((r) => r.tag === tag)).toMatchObject({ endpoint: path, status: 200, outcome: "ok", ...expected });
    });
  }
});
