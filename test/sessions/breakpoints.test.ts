import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { seeded } from "../lib/agent-session.ts";
import { cachesApp, startCaches } from "./fixture.ts";

const caches = await startCaches();
afterAll(() => caches.stop());
beforeEach(() => caches.reset());

type Json = Record<string, any>;
const random = seeded(5);
const words = (n: number) => Array.from({ length: n }, () => `w${Math.floor(random() * 1e6).toString(36)}`).join(" ");
const SYSTEM = `You are a careful coding assistant. ${words(1500)}`;
const TOOLS = [0, 1, 2].map((i) => ({ type: "function", function: { name: `tool_${i}`, description: words(30), parameters: { type: "object", properties: { path: { type: "string" } } } } }));

/** What each call's body carried to the upstream, for the session's pair. */
const sentTo = (model: string) => (model.startsWith("bedrock") ? [...caches.fakes.us.received, ...caches.fakes.eu.received].map((r) => r.body) : [...caches.fakes.a1.received, ...caches.fakes.a2.received].map((r) => r.body));
const marks = (body: Json) => ({
  system: Array.isArray(body.system) ? body.system.map((b: Json) => b.cache_control ?? null) : "string",
  lastTool: body.tools?.at(-1)?.cache_control ?? null,
  lastUser: body.messages.findLast((m: Json) => m.role === "user").content.at(-1).cache_control ?? null,
});

describe("requests converted to Anthropic get cache breakpoints (contract 22)", () => {
  const { json } = cachesApp(caches);

  for (const model of ["claude-sonnet-4-5", "bedrock-sonnet"]) {
    test(`a Chat Completions session to ${model.startsWith("bedrock") ? "Bedrock Claude" : "the Anthropic API"}: breakpoints on the system, the last tool and the last user turn; cached from its second turn`, async () => {
      const messages: Json[] = [{ role: "system", content: SYSTEM }];
      const cached: number[] = [];
      for (let turn = 0; turn < 4; turn++) {
        messages.push({ role: "user", content: `Step ${turn}: ${words(200)}` });
        const response = await json("/v1/chat/completions", { model, messages, tools: TOOLS }, { headers: { "x-parley-session": "chat-session-1" } });
        expect(response.status).toBe(200);
        const body = await response.json();
        cached.push(body.usage.prompt_tokens_details?.cached_tokens ?? 0);
        messages.push({ role: "assistant", content: body.choices[0].message.content });
      }
      expect(cached[0]).toBe(0);
      expect(cached.slice(1).every((n) => n > 1000)).toBe(true);
      for (const sent of sentTo(model)) expect(marks(sent)).toEqual({ system: [{ type: "ephemeral" }], lastTool: { type: "ephemeral" }, lastUser: { type: "ephemeral" } });
    });
  }

  test("a Responses session is cached from its second turn too", async () => {
    const cached: number[] = [];
    let previous: Json[] = [];
    for (let turn = 0; turn < 3; turn++) {
      const input = [...previous, { role: "user", content: `Step ${turn}: ${words(200)}` }];
      const response = await json("/v1/responses", { model: "claude-sonnet-4-5", instructions: SYSTEM, input, prompt_cache_key: "codex-thread-9" });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-parley-session-target")).toBe(turn === 0 ? "new" : "kept");
      const body = await response.json();
      cached.push(body.usage.input_tokens_details.cached_tokens);
      previous = [...input, { role: "assistant", content: "Done." }];
    }
    expect(cached[0]).toBe(0);
    expect(cached.slice(1).every((n) => n > 1000)).toBe(true);
  });

  test("a Claude model Bedrock caches nothing for (Claude 3 Haiku) gets none: Bedrock would refuse the request", async () => {
    const response = await json("/v1/chat/completions", { model: "account-us/claude-3-haiku-20240307", messages: [{ role: "system", content: SYSTEM }, { role: "user", content: words(300) }], tools: TOOLS });
    expect(response.status).toBe(200);
    expect(caches.fakes.us.last().modelId).toContain("anthropic.claude-3-haiku-20240307");
    expect(caches.fakes.us.last().text).not.toContain("cache_control");
  });

  test("a short request gets none: a one-off would pay the write and never read it", async () => {
    const response = await json("/v1/chat/completions", { model: "claude-sonnet-4-5", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }] });
    expect(response.status).toBe(200);
    expect(JSON.stringify(sentTo("claude")[0])).not.toContain("cache_control");
  });

  test("a Chat client's own cache_control on its system part is carried as sent, and nothing is added", async () => {
    const messages = [
      { role: "system", content: [{ type: "text", text: SYSTEM, cache_control: { type: "ephemeral", ttl: "1h" } }] },
      { role: "user", content: [{ type: "text", text: words(300) }, { type: "text", text: "and this", cache_control: { type: "ephemeral" } }] },
    ];
    const response = await json("/v1/chat/completions", { model: "claude-sonnet-4-5", messages, tools: TOOLS });
    expect(response.status).toBe(200);
    const sent = sentTo("claude")[0]!;
    expect(sent.system).toEqual([{ type: "text", text: SYSTEM, cache_control: { type: "ephemeral", ttl: "1h" } }]);
    expect(sent.messages[0].content.map((b: Json) => b.cache_control ?? null)).toEqual([null, { type: "ephemeral" }]);
    expect(sent.tools.at(-1).cache_control).toBeUndefined();
  });

  test("a cache_control on a Chat message (not a part) marks its last block", async () => {
    const messages = [{ role: "system", content: SYSTEM, cache_control: { type: "ephemeral" } }, { role: "user", content: "hello" }];
    await (await json("/v1/chat/completions", { model: "claude-sonnet-4-5", messages })).arrayBuffer();
    const sent = sentTo("claude")[0]!;
    expect(sent.system).toEqual([{ type: "text", text: SYSTEM, cache_control: { type: "ephemeral" } }]);
    expect(sent.messages[0].content[0].cache_control).toBeUndefined();
  });
});

describe('prompt_cache = "off"', () => {
  const { json } = cachesApp(caches, 'prompt_cache = "off"');

  test("a long converted request goes up without breakpoints", async () => {
    const response = await json("/v1/chat/completions", { model: "claude-sonnet-4-5", messages: [{ role: "system", content: SYSTEM }, { role: "user", content: words(300) }], tools: TOOLS });
    expect(response.status).toBe(200);
    expect(JSON.stringify(sentTo("claude")[0])).not.toContain("cache_control");
  });
});
