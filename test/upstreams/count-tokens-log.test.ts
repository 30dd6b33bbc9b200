import { afterAll, expect, test } from "bun:test";
import { createLogger } from "../../src/log.ts";
import type { AccessEntry } from "../../src/server/access-log.ts";
import { createApp } from "../../src/server/app.ts";
import { TEST_KEY, testConfig } from "../lib/app.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "../lib/fake-anthropic.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { writeToml } from "./fleet.ts";

/** A count_tokens log line names the model and the upstream it went to, or would go to when parley estimated. */
const [anthropic, local] = await Promise.all([startFakeAnthropic(), startFakeOpenAI()]);
afterAll(() => (anthropic.stop(), local.stop()));

const { file } = writeToml(`
[upstreams.anthropic]
kind = "anthropic"
api_key = "${FAKE_ANTHROPIC_KEY}"
base_url = "${anthropic.url}"

[upstreams.local]
kind = "openai"
base_url = "${local.url}"

[[routes]]
name = "background"
match = "claude-haiku-*"
model = "qwen2.5-coder:7b"
to = ["local"]
`);
const entries: AccessEntry[] = [];
const app = createApp({ config: testConfig({ PARLEY_UPSTREAMS: file }), log: createLogger("silent"), accessLog: (entry) => entries.push(entry) });
const count = (model: string) =>
  app.handle(new Request("http://localhost/v1/messages/count_tokens", {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "Hello there" }] }),
  }));

test("counted by the upstream: the line names the model and that upstream", async () => {
  const response = await count("claude-sonnet-4-5");
  expect(response.status).toBe(200);
  expect(response.headers.get("x-parley-token-count")).toBeNull();
  expect(entries.at(-1)).toMatchObject({ url: expect.stringContaining("/v1/messages/count_tokens"), model: "claude-sonnet-4-5", provider: "anthropic" });
});

test("estimated by parley: the line names the upstream the request would go to, and its route", async () => {
  const response = await count("claude-haiku-4-5");
  expect(response.headers.get("x-parley-token-count")).toBe("estimate");
  expect(entries.at(-1)).toMatchObject({ model: "claude-haiku-4-5", provider: "local", route: "background" });
  expect(local.received.length).toBe(0);
});
