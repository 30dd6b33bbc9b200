import { afterAll, beforeEach, expect, test } from "bun:test";
import { startClaudeGateway } from "../lib/claude-gateway.ts";
import { countOf } from "../lib/fake-anthropic.ts";

/**
 * Issue 42: count_tokens goes through the loop a chat goes through (contract 10 and 13): a failed
 * count is retried after a backoff, fails over to the route's next target, and an upstream that
 * keeps failing cools down and is skipped. It still writes no usage record.
 */
const gateway = await startClaudeGateway({ UPSTREAM_RETRIES: "1", RATE_LIMIT_RPM: "0", UPSTREAM_COOLDOWN_S: "60" }, `
[[routes]]
match = "claude-haiku-*"
to = ["anthropic"]

[[routes]]
match = "claude-sonnet-*"
to = ["anthropic", "bedrock-us"]
`);
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const headers = { "content-type": "application/json", "anthropic-version": "2023-06-01" };
const count = (model: string) => {
  const body = JSON.stringify({ model, messages: [{ role: "user", content: "Hello there" }] });
  return { body, response: gateway.call("/v1/messages/count_tokens", { method: "POST", body, headers }) };
};
const counted = (path = "/v1/messages/count_tokens") => gateway.anthropic.received.filter((r) => r.path === path).length;

test("Anthropic overloaded once: the count is retried after a backoff and Anthropic's own count answers, not an estimate", async () => {
  gateway.anthropic.countErrors.push({ kind: "error", status: 529, type: "overloaded_error", message: "Overloaded" });
  const { body, response } = count("claude-haiku-4-5-20251001");
  const answer = await response;
  expect(answer.status).toBe(200);
  expect(answer.headers.get("x-parley-token-count")).toBeNull();
  expect(await answer.json()).toEqual({ input_tokens: countOf(body) });
  expect(counted()).toBe(2);
});

test("a count that fails on every try: the estimate, marked, after 1 + UPSTREAM_RETRIES calls", async () => {
  const overloaded = { kind: "error" as const, status: 529, type: "overloaded_error", message: "Overloaded" };
  gateway.anthropic.countErrors.push(overloaded, overloaded, overloaded);
  const answer = await count("claude-haiku-4-5-20251001").response;
  expect(answer.status).toBe(200);
  expect(answer.headers.get("x-parley-token-count")).toBe("estimate");
  expect(counted()).toBe(2);
});

// Last: it leaves Anthropic cooling down.
test("Anthropic failing three counts in a row cools down: the next count goes to Bedrock without asking it", async () => {
  // One success ends the strikes the tests before left.
  expect((await count("claude-haiku-4-5-20251001").response).headers.get("x-parley-token-count")).toBeNull();
  gateway.reset();
  gateway.anthropic.outage.script = { kind: "error", status: 529, type: "overloaded_error", message: "Overloaded" };
  for (let i = 0; i < 3; i++) {
    const answer = await count("claude-sonnet-4-5-20250929").response;
    expect(answer.headers.get("x-parley-token-count")).toBeNull();
    expect(gateway.bedrock.last()).toMatchObject({ action: "count-tokens" });
  }
  expect(counted()).toBe(3);
  const answer = await count("claude-sonnet-4-5-20250929").response;
  expect(answer.status).toBe(200);
  expect(answer.headers.get("x-parley-token-count")).toBeNull();
  expect(counted()).toBe(3);
  expect(gateway.bedrock.received.filter((r) => r.action === "count-tokens").length).toBe(4);
});
