import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import type { UsageRecord } from "../../src/usage/recorder.ts";
import { anthropicEvents, anthropicReply } from "../lib/fake-bedrock.ts";
import { readSse, startGateway } from "../lib/gateway.ts";
import { recordsOf } from "./lib.ts";

/**
 * Contract 12: a completion is recorded with its input (without the cache), output, cache-read and
 * cache-write tokens as the upstream billed them, priced by the model that answered. The same
 * answer is recorded alike whichever dialect asked for it, passed through or converted, whole or
 * streamed.
 */

const gateway = await startGateway({
  RATE_LIMIT_RPM: "0",
  UPSTREAM_RETRIES: "0",
  MODEL_ALIASES: "claude-sonnet-4-5=my-local-model,fast=gpt-4o-mini,claude-3-haiku=mock",
  MODEL_ROUTES: "my-*=alpha,claude-opus-*=mock",
  MODEL_FALLBACKS: "gpt-4.1=my-backup,gpt-5=mock",
});
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const records = () => recordsOf(gateway.config, () => gateway.call("/v1/usage"));
let tags = 0;
/** One call, tagged; its reply, its usage record and its x-parley-cost-usd. */
async function call(path: string, body: Record<string, unknown>) {
  const tag = `cache-${++tags}`;
  const response = await gateway.json(path, body, { headers: { "x-parley-tag": tag, "anthropic-version": "2023-06-01" } });
  expect(response.status).toBe(200);
  const reply = body.stream ? await readSse(response) : await response.json();
  const record = (await records()).find((r) => r.tag === tag);
  if (!record) throw new Error(`no usage record for ${path}`);
  return { reply, record, cost: response.headers.get("x-parley-cost-usd") };
}

const recorded = (record: UsageRecord) => ({
  input_tokens: record.input_tokens, output_tokens: record.output_tokens,
  cache_read_tokens: record.cache_read_tokens, cache_write_tokens: record.cache_write_tokens,
  // To a millionth of a cent.
  cost_usd: record.cost_usd === null ? null : Math.round(record.cost_usd * 1e8) / 1e8,
});

type Dialect = "openai" | "anthropic" | "responses" | "beta_messages";
const PATHS: Record<Dialect, string> = { openai: "/v1/chat/completions", anthropic: "/v1/messages", responses: "/v1/responses", beta_messages: "/v1/chat/completions?target_format=beta_messages" };
function bodyFor(dialect: Dialect, model: string, stream: boolean): Record<string, unknown> {
  const messages = [{ role: "user", content: "Say hello" }];
  switch (dialect) {
    case "openai":
      return { model, stream, ...(stream ? { stream_options: { include_usage: true } } : {}), messages };
    case "anthropic":
      return { model, max_tokens: 50, stream, messages };
    case "responses":
      return { model, stream, input: "Say hello" };
    case "beta_messages":
      return { anthropic_version: "bedrock-2023-05-31", model, max_tokens: 50, stream, messages };
  }
}

/** The usage object each dialect's client reads, from a JSON reply or a stream's events. */
function clientUsage(dialect: Dialect, reply: any, stream: boolean): unknown {
  if (!stream) return reply.usage;
  const events = reply as { event?: string; data: any }[];
  switch (dialect) {
    case "openai":
      return events.find((e) => e.data?.usage)?.data.usage;
    case "responses":
      return events.find((e) => e.event === "response.completed")?.data.response.usage;
    default: {
      const start = events.find((e) => e.event === "message_start")!.data.message.usage;
      const end = events.find((e) => e.event === "message_delta")!.data.usage;
      return { ...start, ...end };
    }
  }
}

// Claude Haiku 4.5 on Bedrock: $1 input, $5 output, $0.10 cache read, $1.25 cache write per million.
const CLAUDE = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
const CLAUDE_USAGE = { input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 1000, output_tokens: 5 };
const CLAUDE_RECORD = { input_tokens: 10, output_tokens: 5, cache_read_tokens: 1000, cache_write_tokens: 200, cost_usd: 0.000385 };

function scriptClaude(stream: boolean, converse = false) {
  if (converse) {
    const usage = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 1000, cacheWriteInputTokens: 200, totalTokens: 1215 };
    if (!stream) return gateway.bedrock.next({ kind: "json", body: { output: { message: { role: "assistant", content: [{ text: "Hello" }] } }, stopReason: "end_turn", usage } });
    return gateway.bedrock.next({ kind: "stream", events: [{ messageStart: { role: "assistant" } }, { contentBlockDelta: { contentBlockIndex: 0, delta: { text: "Hello" } } }, { messageStop: { stopReason: "end_turn" } }, { metadata: { usage } }] });
  }
  if (!stream) return gateway.bedrock.next({ kind: "json", body: { ...anthropicReply(), usage: CLAUDE_USAGE } });
  const events = anthropicEvents().map((event) => {
    if (event.type === "message_start") return { ...event, message: { ...event.message, usage: { ...CLAUDE_USAGE, output_tokens: 1 } } };
    if (event.type === "message_stop") {
      return { ...event, "amazon-bedrock-invocationMetrics": { inputTokenCount: 10, outputTokenCount: 5, invocationLatency: 100, firstByteLatency: 50, cacheReadInputTokenCount: 1000, cacheWriteInputTokenCount: 200 } };
    }
    return event;
  });
  gateway.bedrock.next({ kind: "stream", events });
}

// GPT-4o: $2.50 input, $10 output, $1.25 cached input per million; 1,010 prompt tokens, 1,000 of them cached.
const GPT = "gpt-4o";
const GPT_RECORD = { input_tokens: 10, output_tokens: 5, cache_read_tokens: 1000, cache_write_tokens: 0, cost_usd: 0.001325 };
const scriptGpt = (stream: boolean) => gateway.openai.next(stream ? { kind: "stream", usage: [1010, 5, 1000] } : { kind: "reply", usage: [1010, 5, 1000] });

/** What each dialect's client is told of the Claude answer: its own fields, its own convention. */
const CLAUDE_SEEN: Record<Dialect, object> = {
  openai: { prompt_tokens: 1210, completion_tokens: 5, total_tokens: 1215, prompt_tokens_details: { cached_tokens: 1000 } },
  anthropic: { input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 1000, output_tokens: 5 },
  responses: { input_tokens: 1210, input_tokens_details: { cached_tokens: 1000, cache_write_tokens: 200 }, output_tokens: 5, total_tokens: 1215 },
  // Contract 2: beta_messages' input_tokens is prompt_tokens.
  beta_messages: { input_tokens: 1210, output_tokens: 5 },
};
const GPT_SEEN: Record<Dialect, object> = {
  openai: { prompt_tokens: 1010, completion_tokens: 5, total_tokens: 1015, prompt_tokens_details: { cached_tokens: 1000 } },
  anthropic: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 1000, output_tokens: 5 },
  responses: { input_tokens: 1010, input_tokens_details: { cached_tokens: 1000 }, output_tokens: 5, total_tokens: 1015 },
  beta_messages: { input_tokens: 1010, output_tokens: 5 },
};

describe("prompt caching is recorded and priced alike on every path (contract 12)", () => {
  const dialects: Dialect[] = ["anthropic", "openai", "responses", "beta_messages"];
  for (const stream of [false, true]) {
    for (const dialect of dialects) {
      const how = `${dialect === "anthropic" ? "passed through" : "converted"}, ${stream ? "stream" : "JSON"}`;
      test(`Bedrock Claude to ${dialect}, ${how}: 10 input, 200 written, 1,000 read, 5 output, $0.000385`, async () => {
        scriptClaude(stream);
        const { reply, record, cost } = await call(PATHS[dialect], bodyFor(dialect, CLAUDE, stream));
        expect(recorded(record)).toEqual(CLAUDE_RECORD);
        expect(record).toMatchObject({ model: CLAUDE, provider: "beta", outcome: "ok" });
        expect(clientUsage(dialect, reply, stream)).toMatchObject(CLAUDE_SEEN[dialect]);
        if (!stream) expect(Number(cost)).toBeCloseTo(0.000385, 12);
      });
    }
  }

  for (const stream of [false, true]) {
    test(`Bedrock Converse counts the cache beside the input too, ${stream ? "stream" : "JSON"}`, async () => {
      scriptClaude(stream, true);
      const { record } = await call("/v1/chat/completions", bodyFor("openai", "us.amazon.nova-pro-v1:0", stream));
      // Nova Pro: $0.80 input, $3.20 output, $0.20 cache read, no cache write price (the input price).
      expect(recorded(record)).toEqual({ input_tokens: 10, output_tokens: 5, cache_read_tokens: 1000, cache_write_tokens: 200, cost_usd: (10 * 0.8 + 5 * 3.2 + 1000 * 0.2 + 200 * 0.8) / 1e6 });
    });
  }

  for (const stream of [false, true]) {
    for (const dialect of dialects) {
      const how = `${dialect === "anthropic" || dialect === "beta_messages" ? "converted" : "passed through"}, ${stream ? "stream" : "JSON"}`;
      test(`OpenAI to ${dialect}, ${how}: 1,000 of 1,010 prompt tokens cached, $0.001325`, async () => {
        scriptGpt(stream);
        const { reply, record, cost } = await call(PATHS[dialect], bodyFor(dialect, GPT, stream));
        expect(recorded(record)).toEqual(GPT_RECORD);
        expect(record).toMatchObject({ model: GPT, provider: "alpha", outcome: "ok" });
        expect(clientUsage(dialect, reply, stream)).toMatchObject(GPT_SEEN[dialect]);
        if (!stream) expect(Number(cost)).toBeCloseTo(0.001325, 12);
      });
    }
  }

  test("Anthropic's own name for Claude goes to its inference profile, and is priced as it", async () => {
    scriptClaude(false);
    const { record, cost } = await call("/v1/messages", bodyFor("anthropic", "claude-haiku-4-5", false));
    expect(record).toMatchObject({ model_requested: "claude-haiku-4-5", model: CLAUDE });
    expect(recorded(record)).toEqual(CLAUDE_RECORD);
    expect(Number(cost)).toBeCloseTo(0.000385, 12);
  });
});

describe("the price is the answering model's, not the one asked for", () => {
  test("an alias of a Claude model to a model with no price costs null, not Claude's price", async () => {
    for (const stream of [false, true]) {
      const { record, cost } = await call("/v1/messages", bodyFor("anthropic", "claude-sonnet-4-5", stream));
      expect(record).toMatchObject({ model_requested: "claude-sonnet-4-5", model: "my-local-model", provider: "alpha", input_tokens: 11, output_tokens: 7, cost_usd: null });
      expect(cost).toBeNull();
    }
  });

  test("an alias to a priced model: that model's price", async () => {
    const { record, cost } = await call("/v1/chat/completions", bodyFor("openai", "fast", false));
    const price = (11 * 0.15 + 7 * 0.6) / 1e6;
    expect(record).toMatchObject({ model_requested: "fast", model: "gpt-4o-mini" });
    expect(record.cost_usd!).toBeCloseTo(price, 12);
    expect(Number(cost)).toBeCloseTo(price, 12);
  });

  test("a fallback to a model with no price costs null, not the failed model's price", async () => {
    gateway.openai.next({ kind: "error", status: 503, message: "down" });
    const { record, cost } = await call("/v1/chat/completions", bodyFor("openai", "gpt-4.1", false));
    expect(record).toMatchObject({ model_requested: "gpt-4.1", model: "my-backup", attempts: 2, input_tokens: 11, output_tokens: 7, cost_usd: null });
    expect(cost).toBeNull();
  });

  test("the mock is free however it is reached: by name, alias, route or fallback, JSON or stream", async () => {
    gateway.openai.next({ kind: "error", status: 503, message: "down" }, { kind: "error", status: 503, message: "down" });
    const cases = [["mock", "mock"], ["claude-3-haiku", "mock"], ["claude-opus-4-1", "claude-opus-4-1"], ["gpt-5", "mock"]] as const;
    for (const [asked, model] of cases) {
      for (const stream of [false, true]) {
        const { record, cost } = await call("/v1/messages", bodyFor("anthropic", asked, stream));
        expect({ asked, stream, ...record }).toMatchObject({ asked, stream, model_requested: asked, model, provider: "mock", cost_usd: 0 });
        expect(record.output_tokens).toBeGreaterThan(0);
        if (!stream) expect(cost).toBe("0");
      }
    }
  });
});
