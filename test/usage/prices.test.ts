import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../src/config.ts";
import { costOf, loadPrices } from "../../src/usage/prices.ts";
import { startGateway } from "../lib/gateway.ts";

function configDir(prices?: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), "parley-prices-"));
  if (prices !== undefined) writeFileSync(join(dir, "prices.json"), typeof prices === "string" ? prices : JSON.stringify(prices));
  return dir;
}

describe("the price table (contract 12)", () => {
  test("every model of the catalogue has a price; exact ids win, then the most specific glob", () => {
    const price = loadPrices(configDir());
    for (const model of [
      "gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "o3-mini", "o4-mini", "anthropic.claude-3-5-sonnet-20241022-v2:0",
      "anthropic.claude-3-5-haiku-20241022-v1:0", "anthropic.claude-3-7-sonnet-20250219-v1:0", "us.anthropic.claude-sonnet-4-20250514-v1:0",
      "amazon.titan-text-express-v1", "amazon.titan-text-lite-v1", "amazon.nova-pro-v1:0", "amazon.nova-lite-v1:0",
      "meta.llama3-1-70b-instruct-v1:0", "mistral.mistral-large-2407-v1:0", "cohere.command-r-plus-v1:0", "mock", "mock/tools",
      "text-embedding-3-small", "text-embedding-3-large", "text-embedding-ada-002", "amazon.titan-embed-text-v2:0", "amazon.titan-embed-text-v1",
      "cohere.embed-english-v3", "cohere.embed-multilingual-v3", "cohere.embed-v4:0", "gpt-3.5-turbo-instruct", "davinci-002", "babbage-002",
    ]) expect(price(model)).toBeDefined();
    expect(price("gpt-3.5-turbo-instruct-0914")!.input).toBe(1.5);
    expect(price("amazon.titan-embed-text-v2:0")).toEqual({ input: 0.02, output: 0 });
    expect(price("gpt-4o-mini-2024-07-18")!.input).toBe(0.15);
    expect(price("gpt-4o-2024-08-06")!.input).toBe(2.5);
    expect(price("gpt-4o-2024-05-13")!.input).toBe(5);
    expect(price("eu.anthropic.claude-opus-4-5-20251101-v1:0")!.output).toBe(25);
    expect(price("us.anthropic.claude-opus-4-1-20250805-v1:0")!.output).toBe(75);
    expect(price("llama3.2:latest")).toBeUndefined();
  });

  test("cost: input, output, cache read and write per million; a cache price missing is the input price; no price is null", () => {
    const tokens = { input: 1_000_000, output: 2_000_000, cacheRead: 1_000_000, cacheWrite: 1_000_000 };
    expect(costOf({ input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }, tokens)).toBeCloseTo(3 + 30 + 0.3 + 3.75, 10);
    expect(costOf({ input: 2, output: 1 }, tokens)).toBeCloseTo(2 + 2 + 2 + 2, 10);
    expect(costOf(undefined, tokens)).toBeNull();
  });

  test("PARLEY_CONFIG_DIR/prices.json overrides entry by entry and adds globs", () => {
    const price = loadPrices(configDir({ "gpt-4o-mini*": { input: 1, output: 2 }, "llama*": { input: 0, output: 0 } }));
    expect(price("gpt-4o-mini")).toEqual({ input: 1, output: 2 });
    expect(price("gpt-4o")!.input).toBe(2.5);
    expect(price("llama3.2:latest")).toEqual({ input: 0, output: 0 });
  });

  test.each([
    ["not JSON", "{", /prices\.json is not valid JSON/],
    ["an array", [], /must be a JSON object/],
    ["a negative price", { x: { input: -1, output: 1 } }, /"x" has input=-1/],
    ["an unknown field", { x: { input: 1, output: 1, cached: 1 } }, /"x" has an unknown field "cached"/],
    ["no output", { x: { input: 1 } }, /"x" needs at least input and output/],
  ])("a prices.json with %s stops the start with one line", (_, prices, message) => {
    expect(() => loadPrices(configDir(prices))).toThrow(ConfigError);
    expect(() => loadPrices(configDir(prices))).toThrow(message);
  });

  test("the override reaches replies and records: x-parley-cost-usd on a JSON reply", async () => {
    const dir = configDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "prices.json"), JSON.stringify({ "gpt-4o-mini": { input: 1000, output: 2000 } }));
    const gateway = await startGateway({ PARLEY_CONFIG_DIR: dir, RATE_LIMIT_RPM: "0" });
    try {
      const response = await gateway.json("/v1/chat/completions", { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
      // 11 input and 7 output tokens from the fake OpenAI.
      expect(Number(response.headers.get("x-parley-cost-usd"))).toBeCloseTo((11 * 1000 + 7 * 2000) / 1e6, 10);
      const summary = await (await gateway.call("/v1/usage")).json();
      expect(summary.data).toEqual([{ group: "gpt-4o-mini", requests: 1, input_tokens: 11, output_tokens: 7, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.025 }]);
    } finally {
      await gateway.stop();
    }
  });
});
