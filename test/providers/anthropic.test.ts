import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { KINDS } from "../../src/providers/kinds.ts";
import type { Upstream } from "../../src/providers/kind.ts";
import { recordsOf } from "../usage/lib.ts";
import { startClaudeGateway } from "../lib/claude-gateway.ts";
import { countOf, FAKE_ANTHROPIC_KEY, FAKE_ANTHROPIC_MODELS, message, messageEvents, startFakeAnthropic } from "../lib/fake-anthropic.ts";
import { readSse } from "../lib/gateway.ts";

/** Contract 14: the Anthropic API as an upstream; lossless for Anthropic's clients, through the IR for the others. */
const gateway = await startClaudeGateway({ UPSTREAM_RETRIES: "0", MODEL_ALIASES: "fast=claude-haiku-4-5-20251001", RATE_LIMIT_RPM: "0" });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const MODEL = "claude-sonnet-4-5-20250929";
const ANTHROPIC = { "anthropic-version": "2023-06-01" };
/** A body as Claude Code writes it: cache_control on the system, a thinking block in the history, a field parley does not know. */
const claudeCodeBody = (model = MODEL, stream = false) =>
  `{"model":${JSON.stringify(model)},"max_tokens":1024,"system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}],` +
  `"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"The user greets.","signature":"EqQBsig=="},{"type":"text","text":"Hello"}]},` +
  `{"role":"user","content":[{"type":"text","text":"Again","cache_control":{"type":"ephemeral","ttl":"1h"}}]}],` +
  `"thinking":{"type":"enabled","budget_tokens":1024},"context_management":{"edits":[]},"metadata":{"user_id":"u1"},"stream":${stream}}`;
const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  gateway.call(path, { method: "POST", body, headers: { "content-type": "application/json", ...ANTHROPIC, ...headers } });

describe("an Anthropic client to the anthropic kind: lossless", () => {
  test("the body goes up byte for byte with the key, the version and the client's betas; the reply comes back as sent", async () => {
    const body = claudeCodeBody();
    const response = await post("/v1/messages", body, { "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14" });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-parley-upstream")).toBe("anthropic");
    expect(await response.text()).toBe(JSON.stringify(message(MODEL)));
    const sent = gateway.anthropic.last();
    expect(sent.path).toBe("/v1/messages");
    expect(sent.raw).toBe(body);
    expect(sent.headers.get("x-api-key")).toBe(FAKE_ANTHROPIC_KEY);
    expect(sent.headers.get("anthropic-version")).toBe("2023-06-01");
    expect(sent.headers.get("anthropic-beta")).toBe("claude-code-20250219,interleaved-thinking-2025-05-14");
    expect(sent.headers.get("authorization")).toBeNull();
    expect(gateway.bedrock.received).toHaveLength(0);
  });

  test("the stream is relayed event by event as sent (ping included)", async () => {
    const events = messageEvents(MODEL, ["Hel", "lo"], ["Thinking", " hard"]);
    gateway.anthropic.next({ kind: "stream", events });
    const response = await post("/v1/messages", claudeCodeBody(MODEL, true));
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(await response.text()).toBe(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""));
  });

  test("an alias changes only the model in the body; the reply names the id the client sent", async () => {
    const body = claudeCodeBody("fast");
    const response = await post("/v1/messages", body);
    expect(gateway.anthropic.last().raw).toBe(body.replace('"model":"fast"', '"model":"claude-haiku-4-5-20251001"'));
    const reply = await response.json();
    expect(reply.model).toBe("fast");
    const stream = await post("/v1/messages", claudeCodeBody("fast", true));
    const events = await readSse(stream);
    expect(events[0]!.data.message.model).toBe("fast");
    expect(events.at(-1)!.event).toBe("message_stop");
  });

  test("usage is recorded as Anthropic bills it: input without the cache, cache reads and writes apart", async () => {
    await post("/v1/messages", claudeCodeBody(MODEL), { "x-parley-tag": "anthropic-json" });
    await (await post("/v1/messages", claudeCodeBody(MODEL, true), { "x-parley-tag": "anthropic-stream" })).text();
    const records = await recordsOf(gateway.config, () => gateway.call("/v1/usage"));
    const of = (tag: string) => records.find((r) => r.tag === tag)!;
    expect(of("anthropic-json")).toMatchObject({ provider: "anthropic", input_tokens: 21, cache_read_tokens: 2048, cache_write_tokens: 0, output_tokens: 6 });
    // The stream's input is in message_start, its output in message_delta.
    expect(of("anthropic-stream")).toMatchObject({ provider: "anthropic", input_tokens: 21, cache_read_tokens: 2048, cache_write_tokens: 100, output_tokens: 6 });
  });

  test("an upstream error keeps its status, type and message (the upstream named: nothing to fail over to)", async () => {
    gateway.anthropic.next({ kind: "error", status: 400, type: "invalid_request_error", message: "messages.1.content.0.thinking.signature: Field required" });
    const bad = await post("/v1/messages", claudeCodeBody());
    expect(bad.status).toBe(400);
    expect(gateway.bedrock.received).toHaveLength(0);
    expect(await bad.json()).toEqual({ type: "error", error: { type: "invalid_request_error", message: "messages.1.content.0.thinking.signature: Field required" } });
    gateway.anthropic.overloaded();
    const busy = await post("/v1/messages", claudeCodeBody(`anthropic/${MODEL}`));
    expect(busy.status).toBe(529);
    expect(await busy.json()).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
  });

  test("a 401 is about parley's key, not the client's: a 502 naming the setting", async () => {
    gateway.anthropic.next({ kind: "error", status: 401, type: "authentication_error", message: "invalid x-api-key" });
    const response = await post("/v1/messages", claudeCodeBody(`anthropic/${MODEL}`));
    expect(response.status).toBe(502);
    const body = await response.json();
    expect(body.error.type).toBe("api_error");
    expect(body.error.message).toContain("api_key in [upstreams.anthropic]");
  });

  test("a passthrough is not decoded: a block parley cannot convert (an image from Anthropic's Files API) goes up as sent; a converted route refuses it", async () => {
    const blocks = `[{"type":"image","source":{"type":"file","file_id":"file_011CNha8iCJcU1wXNR6q4V8w"}},{"type":"text","text":"What is this?"}]`;
    const body = `{"model":"${MODEL}","max_tokens":100,"messages":[{"role":"user","content":${blocks}}]}`;
    const response = await post("/v1/messages", body);
    expect(response.status).toBe(200);
    expect(gateway.anthropic.last().raw).toBe(body);
    const converted = await post("/v1/messages", body.replace(MODEL, "gpt-4o"));
    expect(converted.status).toBe(422);
    expect((await converted.json()).error.message).toContain("messages[0].content[0].source");
  });

  test("count_tokens is Anthropic's own count of the body as sent", async () => {
    const body = `{"model":"${MODEL}","messages":[{"role":"user","content":"Hello there"}]}`;
    const response = await post("/v1/messages/count_tokens", body);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-parley-token-count")).toBeNull();
    expect(await response.json()).toEqual({ input_tokens: countOf(body) });
    expect(gateway.anthropic.last()).toMatchObject({ path: "/v1/messages/count_tokens", raw: body });
  });
});

describe("other clients to the anthropic kind: through the IR", () => {
  test("chat completions, whole and streamed, with Anthropic's cache counted in prompt_tokens", async () => {
    const response = await gateway.json("/v1/chat/completions", { model: MODEL, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }] });
    const reply = await response.json();
    expect(reply.choices[0].message.content).toBe("Hello from Anthropic");
    expect(reply.usage).toMatchObject({ prompt_tokens: 21 + 2048, completion_tokens: 6, prompt_tokens_details: { cached_tokens: 2048 } });
    const sent = gateway.anthropic.last().body;
    expect(sent).toMatchObject({ model: MODEL, system: "Be brief.", messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }] });
    expect(sent.anthropic_version).toBeUndefined();

    const stream = await gateway.json("/v1/chat/completions", { model: MODEL, stream: true, messages: [{ role: "user", content: "Hi" }] });
    const events = await readSse(stream);
    expect(events.filter((e) => e.data !== "[DONE]").map((e) => e.data.choices[0]?.delta?.content ?? "").join("")).toBe("Hello from Anthropic");
    expect(gateway.anthropic.last().body.stream).toBe(true);
  });

  test("an Anthropic error reaches an OpenAI client in its own envelope", async () => {
    gateway.anthropic.next({ kind: "error", status: 400, type: "invalid_request_error", message: "max_tokens: too large" });
    const response = await gateway.json("/v1/chat/completions", { model: MODEL, messages: [{ role: "user", content: "Hi" }] });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain("max_tokens: too large");
  });
});

describe("models from Anthropic's GET /v1/models", () => {
  test("every page is read", async () => {
    const fake = await startFakeAnthropic();
    try {
      const upstream: Upstream = {
        name: "anthropic", kind: "anthropic", settings: KINDS.anthropic.settings({ api_key: FAKE_ANTHROPIC_KEY, base_url: fake.url }),
        discover: true, timeoutMs: 5000, retries: 0, headers: {}, origin: {},
      };
      const listed = await KINDS.anthropic.list!(upstream);
      expect(listed.map((m) => m.id)).toEqual(FAKE_ANTHROPIC_MODELS.map((m) => m.id));
      expect(fake.models.calls).toBe(2);
      expect(listed[0]).toMatchObject({ owned_by: "anthropic", created: Date.parse("2025-09-29T00:00:00Z") / 1000 });
    } finally {
      fake.stop();
    }
  });
});
