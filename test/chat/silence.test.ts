import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { watchedStreams } from "../../src/lib/silence.ts";
import { anthropicEvents, converseEvents } from "../lib/fake-bedrock.ts";
import { startGateway } from "../lib/gateway.ts";

/**
 * UPSTREAM_TIMEOUT_MS bounds every silence between two chunks of a stream, passed through or
 * converted (contract 10): a silent stream ends with its dialect's error event within a second of
 * the limit. Bun's own socket idle timeout, which did it before, came 5 to 8 s late.
 */
const LIMIT_MS = 1000;
const gateway = await startGateway({ UPSTREAM_TIMEOUT_MS: String(LIMIT_MS), UPSTREAM_RETRIES: "0" });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const CLAUDE = "anthropic.claude-3-5-sonnet-20241022-v2:0";
const LLAMA = "meta.llama3-70b-instruct-v1:0";
const hello = [{ role: "user", content: "hi" }];
const anthropic = { headers: { "anthropic-version": "2023-06-01" } };

const paths: [string, () => void, string, object, RegExp][] = [
  ["OpenAI chat, passed through", () => gateway.openai.next({ kind: "stream", stallAfter: 2 }), "/v1/chat/completions", { model: "gpt-4o", stream: true, messages: hello }, /\ndata: \{"error":\{[^\n]*timed out[^\n]*\}\}\n\n$/],
  ["OpenAI Responses, passed through", () => gateway.openai.next({ kind: "stream", stallAfter: 3 }), "/v1/responses", { model: "gpt-4o", stream: true, input: "hi" }, /\nevent: (error|response\.failed)\ndata: [^\n]*timed out[^\n]*\n\n$/],
  ["OpenAI, converted to Anthropic's events", () => gateway.openai.next({ kind: "stream", stallAfter: 2 }), "/v1/messages", { model: "gpt-4o", stream: true, max_tokens: 50, messages: hello }, /\nevent: error\ndata: [^\n]*timed out[^\n]*\n\n$/],
  ["Claude on Bedrock, passed through", () => gateway.bedrock.next({ kind: "stream", events: anthropicEvents(["one", "two"]), stallAfter: 2 }), "/v1/messages", { model: CLAUDE, stream: true, max_tokens: 50, messages: hello }, /\nevent: error\ndata: [^\n]*timed out[^\n]*\n\n$/],
  ["Bedrock Converse, converted to chat completions", () => gateway.bedrock.next({ kind: "stream", events: converseEvents(), stallAfter: 2 }), "/v1/chat/completions", { model: LLAMA, stream: true, messages: hello }, /\ndata: \{"error":\{[^\n]*timed out[^\n]*\}\}\n\n$/],
];

describe("a stream whose upstream falls silent in the middle", () => {
  for (const [name, script, path, body, errorEvent] of paths) {
    test(`${name}: ends with its dialect's error event within a second of UPSTREAM_TIMEOUT_MS`, async () => {
      script();
      const started = performance.now();
      const response = await gateway.json(path, body, anthropic);
      expect(response.status).toBe(200);
      const text = await response.text();
      const elapsed = performance.now() - started;
      expect(text).toMatch(errorEvent);
      // Not cut before the limit; the upper bound leaves room for a busy machine (it was 5 to 8 s).
      expect(elapsed).toBeGreaterThanOrEqual(LIMIT_MS);
      expect(elapsed).toBeLessThan(LIMIT_MS + 2500);
      // The silent upstream is hung up on.
      const cancelled = () => gateway.openai.state.cancelled + gateway.bedrock.state.cancelled;
      for (let i = 0; i < 100 && cancelled() === 0; i++) await Bun.sleep(20);
      expect(cancelled()).toBeGreaterThan(0);
    });
  }

  test("chunks that keep coming, each within the limit, are never cut, however long the stream", async () => {
    gateway.openai.next({ kind: "stream", chunks: ["a", "b", "c", "d", "e"], gapMs: LIMIT_MS / 3 });
    const response = await gateway.json("/v1/chat/completions", { model: "gpt-4o", stream: true, messages: hello });
    const text = await response.text();
    expect(text).not.toContain("error");
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  test("no stream stays watched once it is over: ended, cut or left by its client", async () => {
    await (await gateway.json("/v1/chat/completions", { model: "gpt-4o", stream: true, messages: hello })).text();
    gateway.openai.next({ kind: "stream", stallAfter: 2 });
    const left = new AbortController();
    const base = gateway.listen();
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: "POST", signal: left.signal, body: JSON.stringify({ model: "gpt-4o", stream: true, messages: hello }),
      headers: { authorization: "Bearer sk-test-0123456789abcdef", "content-type": "application/json" },
    });
    await response.body!.getReader().read();
    left.abort();
    for (let i = 0; i < 50 && watchedStreams() > 0; i++) await Bun.sleep(20);
    expect(watchedStreams()).toBe(0);
  });
});
