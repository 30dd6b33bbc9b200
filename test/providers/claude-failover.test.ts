import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { expectAnthropicSequence } from "../lib/anthropic-sequence.ts";
import { startClaudeGateway } from "../lib/claude-gateway.ts";
import { messageEvents } from "../lib/fake-anthropic.ts";
import { anthropicEvents, thinkingEvents } from "../lib/fake-bedrock.ts";
import { readSse, TEST_KEY } from "../lib/gateway.ts";

/**
 * Contract 13 and 14: one Claude model on two kinds. Anthropic overloaded (529), rate limiting
 * (429) or failing (5xx) before the first byte: Bedrock answers, the client sees one answer, and
 * `x-parley-upstream` names who gave it. The client's body reaches either as sent.
 */
// Cooldowns off: each test fails Anthropic on purpose, and it must be tried first in the next.
const gateway = await startClaudeGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0", UPSTREAM_COOLDOWN_S: "0" }, `
[[routes]]
name = "claude-failover"
match = "claude-sonnet-*"
to = ["anthropic", "bedrock-us"]

[[routes]]
match = "claude-opus-*"
to = ["bedrock-us", "anthropic"]
`);
const baseURL = gateway.listen();
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const SONNET = "claude-sonnet-4-5-20250929";
const cacheControl = { type: "ephemeral" } as const;
/** A request whose history holds a thinking block and whose system and last message carry cache_control. */
const request = (model: string, stream = false) => ({
  model, max_tokens: 2048, stream,
  system: [{ type: "text", text: "You are Claude Code.", cache_control: cacheControl }],
  thinking: { type: "enabled", budget_tokens: 1024 },
  messages: [
    { role: "user", content: "What is 2+2?" },
    { role: "assistant", content: [{ type: "thinking", thinking: "Simple sum.", signature: "EqQBsig==" }, { type: "text", text: "4" }] },
    { role: "user", content: [{ type: "text", text: "And 3+3?", cache_control: cacheControl }] },
  ],
});
const send = (body: object, headers: Record<string, string> = {}) =>
  gateway.json("/v1/messages", body, { headers: { "anthropic-version": "2023-06-01", "anthropic-beta": "interleaved-thinking-2025-05-14", ...headers } });

/** What the client asked for, as Bedrock's InvokeModel got it: the same, but model and stream, with Bedrock's version and betas. */
function expectSameRequest(got: Record<string, unknown>, sent: Record<string, unknown>) {
  const { model: _m, stream: _s, ...rest } = sent;
  expect(got).toEqual({ anthropic_version: "bedrock-2023-05-31", anthropic_beta: ["interleaved-thinking-2025-05-14"], ...rest });
}

describe("Anthropic first, Bedrock second", () => {
  test.each([
    ["529 overloaded_error", { kind: "error", status: 529, type: "overloaded_error", message: "Overloaded" }],
    ["429 rate_limit_error", { kind: "error", status: 429, type: "rate_limit_error", message: "Rate limited", headers: { "retry-after": "1" } }],
    ["500 api_error", { kind: "error", status: 500, type: "api_error", message: "Internal server error" }],
    ["a stream opening with an overloaded_error event", { kind: "stream-error", type: "overloaded_error", message: "Overloaded" }],
  ] as const)("%s: Bedrock answers, thinking and cache_control intact", async (_, failure) => {
    gateway.anthropic.next(failure as never);
    const stream = failure.kind === "stream-error";
    const body = request(SONNET, stream);
    const response = await send(body);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-parley-upstream")).toBe("bedrock-us");
    expect(response.headers.get("x-parley-attempts")).toBe("2");
    expect(response.headers.get("x-parley-route")).toBe("claude-failover");
    if (stream) {
      const events = await readSse(response);
      expect(events[0]!.data.message.model).toBe(SONNET);
      expect(events.filter((e) => e.event === "content_block_delta").map((e) => e.data.delta.text).join("")).toBe("Hello from Claude");
    } else {
      const reply = await response.json();
      expect(reply.model).toBe(SONNET);
      expect(reply.content[0].text).toBe("Hello from Claude");
    }
    expect(gateway.anthropic.received).toHaveLength(1);
    expect(gateway.bedrock.last().modelId).toBe("us.anthropic.claude-sonnet-4-5-20250929-v1:0");
    expectSameRequest(gateway.bedrock.last().body, body);
  });

  test("a stream: Anthropic overloaded before its first byte, one uninterrupted stream from Bedrock with its thinking", async () => {
    gateway.anthropic.overloaded();
    gateway.bedrock.next({ kind: "stream", events: thinkingEvents() });
    const response = await send(request(SONNET, true));
    expect(response.headers.get("x-parley-upstream")).toBe("bedrock-us");
    const events = await readSse(response);
    expectAnthropicSequence(events);
    expect(events.filter((e) => e.event === "message_start")).toHaveLength(1);
    expect(events[0]!.data.message.model).toBe(SONNET);
    expect(events.filter((e) => e.data.delta?.type === "thinking_delta").map((e) => e.data.delta.thinking).join("")).toBe("Let me think about it.");
    expect(events.some((e) => e.data.delta?.type === "signature_delta")).toBe(true);
  });

  test("a stream that breaks after it started is not sent again elsewhere: it ends with Anthropic's error event", async () => {
    gateway.anthropic.next({ kind: "stream", events: messageEvents(SONNET), errorAfter: 4 });
    const events = await readSse(await send(request(SONNET, true)));
    expect(events.at(-1)!.event).toBe("error");
    expect(gateway.bedrock.received).toHaveLength(0);
  });

  test("a 400 is the request's fault: no failover, Anthropic's words", async () => {
    gateway.anthropic.next({ kind: "error", status: 400, type: "invalid_request_error", message: "thinking.budget_tokens: must be less than max_tokens" });
    const response = await send(request(SONNET));
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toBe("thinking.budget_tokens: must be less than max_tokens");
    expect(gateway.bedrock.received).toHaveLength(0);
  });

  test("without a route, claude-* goes to the anthropic upstreams, then the bedrock ones", async () => {
    gateway.anthropic.overloaded();
    const response = await send(request("claude-haiku-4-5"));
    expect(response.status).toBe(200);
    // The variables' Bedrock (beta) is declared before the file's.
    expect(response.headers.get("x-parley-upstream")).toBe("beta");
    expect(gateway.bedrock.last().modelId).toBe("us.anthropic.claude-haiku-4-5-20251001-v1:0");
    const answered = await send(request("claude-haiku-4-5"));
    expect(answered.headers.get("x-parley-upstream")).toBe("anthropic");
  });
});

describe("count_tokens across kinds", () => {
  test("Anthropic overloaded: Bedrock's CountTokens counts, not an estimate", async () => {
    const body = JSON.stringify({ model: SONNET, messages: [{ role: "user", content: "Hello there" }] });
    const headers = { "content-type": "application/json", "anthropic-version": "2023-06-01" };
    gateway.anthropic.outage.script = { kind: "error", status: 529, type: "overloaded_error", message: "Overloaded" };
    const response = await gateway.call("/v1/messages/count_tokens", { method: "POST", body, headers });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-parley-token-count")).toBeNull();
    expect(gateway.bedrock.last()).toMatchObject({ action: "count-tokens", modelId: "anthropic.claude-sonnet-4-5-20250929-v1:0" });
    expect((await response.json()).input_tokens).toBeGreaterThan(0);
  });
});

describe("Bedrock first, Anthropic second", () => {
  test("Bedrock throttling: Anthropic gets the client's body byte for byte", async () => {
    gateway.bedrock.next({ kind: "error", status: 429, type: "ThrottlingException", message: "Too many requests" });
    const body = JSON.stringify(request("claude-opus-4-1-20250805"));
    const response = await gateway.call("/v1/messages", { method: "POST", body, headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-parley-upstream")).toBe("anthropic");
    expect(gateway.anthropic.last().raw).toBe(body);
    expect((await response.json()).model).toBe("claude-opus-4-1-20250805");
  });
});

describe("the official Anthropic SDK through parley, failing over", () => {
  const client = new Anthropic({ apiKey: TEST_KEY, baseURL, maxRetries: 0 });

  test("messages.create: one message, from Bedrock", async () => {
    gateway.anthropic.overloaded();
    const { data, response } = await client.messages.create(request(SONNET) as Anthropic.MessageCreateParamsNonStreaming).withResponse();
    expect(response.headers.get("x-parley-upstream")).toBe("bedrock-us");
    expect(data.content.map((b) => (b.type === "text" ? b.text : b.type))).toEqual(["Hello from Claude"]);
  });

  test("messages.stream: one stream with thinking and text, from Bedrock after a 529", async () => {
    gateway.anthropic.overloaded();
    gateway.bedrock.next({ kind: "stream", events: thinkingEvents() });
    const message = await client.messages.stream(request(SONNET) as Anthropic.MessageStreamParams).finalMessage();
    expect(message.content.map((b) => b.type)).toEqual(["thinking", "text"]);
    expect((message.content[0] as Anthropic.ThinkingBlock).signature).toBe("EqQBCkYIARgCIkD0sig==");
    expect(message.usage).toMatchObject({ cache_read_input_tokens: 100, output_tokens: 9 });
  });

  test("messages.stream straight from Anthropic, and a 529 it cannot escape reaches the SDK as its OverloadedError", async () => {
    gateway.anthropic.next({ kind: "stream", events: messageEvents(SONNET, ["Hi", " there"], ["Hmm"]) });
    const message = await client.messages.stream(request(SONNET) as Anthropic.MessageStreamParams).finalMessage();
    expect(message.content.map((b) => b.type)).toEqual(["thinking", "text"]);
    expect(message.usage).toMatchObject({ input_tokens: 21, cache_read_input_tokens: 2048, cache_creation_input_tokens: 100 });
    gateway.anthropic.overloaded();
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents() });
    const error = await client.messages.create({ ...request(`anthropic/${SONNET}`), stream: false } as Anthropic.MessageCreateParamsNonStreaming).catch((e) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(error.status).toBe(529);
    expect(error.error.error.type).toBe("overloaded_error");
  });
});

describe("a Claude id the Anthropic upstream lists", () => {
  test("still fails over to Bedrock, which lists it by another id", async () => {
    const listing = await startClaudeGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0" }, "", `models = ["${SONNET}"]`);
    try {
      listing.anthropic.overloaded();
      const response = await listing.json("/v1/messages", request(SONNET), { headers: { "anthropic-version": "2023-06-01" } });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-parley-upstream")).toBe("beta");
      expect(listing.anthropic.received).toHaveLength(1);
    } finally {
      await listing.stop();
    }
  });
});

describe("Anthropic silent or dropping the connection", () => {
  test("silent or dropped before its first byte: Bedrock answers; silent or dropped mid-stream: Anthropic's error event ends the stream", async () => {
    const slow = await startClaudeGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0", UPSTREAM_COOLDOWN_S: "0" }, "", "timeout_ms = 300");
    try {
      const ask = (stream: boolean) => slow.json("/v1/messages", request(SONNET, stream), { headers: { "anthropic-version": "2023-06-01" } });
      slow.anthropic.next({ kind: "hang" });
      const failedOver = await ask(false);
      expect(failedOver.status).toBe(200);
      expect(failedOver.headers.get("x-parley-upstream")).toBe("beta");

      slow.anthropic.next({ kind: "stream", events: messageEvents(SONNET), stallAfter: 3 });
      const stalled = await readSse(await ask(true));
      expect(stalled[0]!.event).toBe("message_start");
      expect(stalled.at(-1)).toMatchObject({ event: "error", data: { type: "error", error: { type: "api_error" } } });
      expect(stalled.at(-1)!.data.error.message).toMatch(/sent nothing for 300 ms/);

      // Paced, so that the first events are out before the drop (a drop before any byte fails over).
      slow.anthropic.next({ kind: "stream", events: messageEvents(SONNET), breakAfter: 3, gapMs: 30 });
      const dropped = await readSse(await ask(true));
      expect(dropped.at(-1)!.event).toBe("error");
      expect(dropped.at(-1)!.data.error.message).toMatch(/dropped the connection/);
      expect(slow.bedrock.received).toHaveLength(1);

      slow.anthropic.next({ kind: "stream", events: messageEvents(SONNET), breakAfter: 0 });
      const resetAtOnce = await ask(true);
      expect(resetAtOnce.headers.get("x-parley-upstream")).toBe("beta");
      expect((await readSse(resetAtOnce)).at(-1)!.event).toBe("message_stop");
    } finally {
      await slow.stop();
    }
  });
});
