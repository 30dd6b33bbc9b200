import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { testApp } from "../lib/app.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { writeToml } from "../upstreams/fleet.ts";
import { recordsOf } from "./lib.ts";

/**
 * Cost and the usage record follow the model the upstream says answered (contract 12): a local
 * server asked for gpt-4o answers with its own model, which has no price, so the cost is null (not
 * gpt-4o's price), on every path its reply takes (passed through or converted, JSON or streamed).
 */
const local = await startFakeOpenAI();
afterAll(() => local.stop());
beforeEach(() => {
  local.reset();
  local.runs.model = "readme-llama-1m";
});

const { file } = writeToml(`
[upstreams.local]
kind = "openai"
base_url = "${local.url}"
models = ["gpt-4o"]
`);
const { json, call, config } = testApp({ PARLEY_UPSTREAMS: file, RATE_LIMIT_RPM: "0" });
const records = () => recordsOf(config, () => call("/v1/usage"));

const BODIES = {
  "/v1/chat/completions": (stream: boolean) => ({ model: "gpt-4o", stream, ...(stream ? { stream_options: { include_usage: true } } : {}), messages: [{ role: "user", content: "hi" }] }),
  "/v1/messages": (stream: boolean) => ({ model: "gpt-4o", stream, max_tokens: 32, messages: [{ role: "user", content: "hi" }] }),
  "/v1/responses": (stream: boolean) => ({ model: "gpt-4o", stream, input: "hi" }),
};

describe("the model that answered prices the answer", () => {
  for (const path of Object.keys(BODIES) as (keyof typeof BODIES)[]) {
    for (const stream of [false, true]) {
      test(`${path}, ${stream ? "stream" : "JSON"}: recorded as readme-llama-1m, cost null`, async () => {
        const tag = `${path}-${stream}`;
        const response = await json(path, BODIES[path](stream), { headers: { "x-parley-tag": tag } });
        expect(response.status).toBe(200);
        await response.text();
        expect(response.headers.get("x-parley-cost-usd")).toBeNull();
        const record = (await records()).find((r) => r.tag === tag);
        expect(record).toMatchObject({ model_requested: "gpt-4o", model: "readme-llama-1m", provider: "local", cost_usd: null });
        expect(record!.output_tokens).toBeGreaterThan(0);
      });
    }
  }

  test("the same upstream answering as gpt-4o is priced as gpt-4o", async () => {
    delete local.runs.model;
    const response = await json("/v1/chat/completions", BODIES["/v1/chat/completions"](false));
    expect(Number(response.headers.get("x-parley-cost-usd"))).toBeCloseTo((11 * 2.5 + 7 * 10) / 1e6, 12);
  });
});
