import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { anthropicEvents, anthropicReply, thinkingEvents } from "../lib/fake-bedrock.ts";
import { startGateway, TEST_KEY } from "../lib/gateway.ts";

/** The official Anthropic SDK, pointed at a listening parley: what Claude Code and SDK users do. */
const gateway = await startGateway({ UPSTREAM_RETRIES: "0" });
const baseURL = gateway.listen();
const client = new Anthropic({ apiKey: TEST_KEY, baseURL, maxRetries: 0 });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const weather: Anthropic.Tool = {
  name: "get_weather",
  description: "Current weather",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe.each(["claude-sonnet-4-6", "gpt-4o", "mock"])("the Anthropic SDK against %s", (model) => {
  test("messages.create", async () => {
    const message = await client.messages.create({ model, max_tokens: 100, system: "Be brief.", messages: [{ role: "user", content: "Hello" }] });
    expect(message.type).toBe("message");
    expect(message.model).toBe(model);
    expect(message.stop_reason).toBe("end_turn");
    const text = message.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(text).toBe({ "claude-sonnet-4-6": "Hello from Claude", "gpt-4o": "Hello from OpenAI", mock: "Hello" }[model]!);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  test("messages.stream", async () => {
    const stream = client.messages.stream({ model, max_tokens: 100, messages: [{ role: "user", content: "Hello" }] });
    const deltas: string[] = [];
    stream.on("text", (text) => deltas.push(text));
    const message = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(0);
    expect(message.content[0]!.type).toBe("text");
    expect(deltas.join("")).toBe((message.content[0] as Anthropic.TextBlock).text);
    expect(message.model).toBe(model);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  test("a tool round trip", async () => {
    if (model === "claude-sonnet-4-6") {
      gateway.bedrock.next(
        { kind: "json", body: anthropicReply([{ type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } }], "tool_use") },
        { kind: "json", body: anthropicReply([{ type: "text", text: "It is sunny in Paris." }]) },
      );
    }
    if (model === "gpt-4o") {
      gateway.openai.next(
        { kind: "reply", toolCalls: [{ id: "toolu_01", name: "get_weather", arguments: '{"city":"Paris"}' }] },
        { kind: "reply", text: "It is sunny in Paris." },
      );
    }
    const tooling = model === "mock" ? "mock/tools" : model;
    const question: Anthropic.MessageParam = { role: "user", content: "Paris" };
    const first = await client.messages.create({ model: tooling, max_tokens: 100, tools: [weather], messages: [question] });
    expect(first.stop_reason).toBe("tool_use");
    if (model === "claude-sonnet-4-6") expect(gateway.bedrock.last().modelId).toBe("us.anthropic.claude-sonnet-4-6");
    const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use")!;
    expect(call.name).toBe("get_weather");
    expect((call.input as { city: string }).city).toBe(model === "mock" ? "mock/tools: Paris" : "Paris");
    const second = await client.messages.create({
      // The mock calls a tool whenever it may.
      model: tooling, max_tokens: 100, tools: [weather], ...(model === "mock" ? { tool_choice: { type: "none" as const } } : {}),
      messages: [question, { role: "assistant", content: first.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "sunny" }] }],
    });
    expect(second.stop_reason).toBe("end_turn");
    const text = second.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(text).toBe(model === "mock" ? `Tool ${call.id} returned: sunny` : "It is sunny in Paris.");
  });

  test("countTokens", async () => {
    const count = await client.messages.countTokens({ model, messages: [{ role: "user", content: "Hello there" }], tools: [weather] });
    expect(count.input_tokens).toBeGreaterThan(0);
  });
});

describe("the Anthropic SDK: streams with thinking, models, typed errors", () => {
  test("a thinking stream accumulates into thinking and text blocks with the signature", async () => {
    gateway.bedrock.next({ kind: "stream", events: thinkingEvents() });
    const message = await client.messages.stream({ model: "claude-sonnet-4-6", max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 1024 }, messages: [{ role: "user", content: "hi" }] }).finalMessage();
    expect(message.content[0]).toEqual({ type: "thinking", thinking: "Let me think about it.", signature: "EqQBCkYIARgCIkD0sig==" });
    expect(message.content[1]).toMatchObject({ type: "text", text: "Hello after thinking" });
    expect(message.usage.cache_read_input_tokens).toBe(100);
  });

  test("models.list pages through Anthropic's list; models.retrieve", async () => {
    const ids: string[] = [];
    for await (const model of client.models.list({ limit: 3 })) ids.push(model.id);
    expect(ids).toContain("claude-sonnet-4-5-20250929");
    expect(ids).toContain("gpt-4o");
    expect(new Set(ids).size).toBe(ids.length);
    const one = await client.models.retrieve("claude-haiku-4-5-20251001");
    expect(one.display_name).toBe("Claude Haiku 4.5");
  });

  test("typed errors", async () => {
    const params = { max_tokens: 10, messages: [{ role: "user" as const, content: "x" }] };
    const wrongKey = new Anthropic({ apiKey: "sk-wrong", baseURL, maxRetries: 0 });
    expect(await wrongKey.messages.create({ model: "mock", ...params }).catch((e) => e)).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(await client.messages.create({ model: "no-such-model", ...params }).catch((e) => e)).toBeInstanceOf(Anthropic.NotFoundError);
    const limited = await client.messages.create({ model: "mock/error-429", ...params }).catch((e) => e);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect(limited.requestID).toBeTruthy();
    expect(await client.messages.create({ model: "mock/error-503", ...params }).catch((e) => e)).toBeInstanceOf(Anthropic.InternalServerError);
    gateway.bedrock.next({ kind: "error", status: 400, type: "ValidationException", message: "messages: text content blocks must be non-empty" });
    const invalid = await client.messages.create({ model: "claude-sonnet-4-6", ...params }).catch((e) => e);
    expect(invalid).toBeInstanceOf(Anthropic.BadRequestError);
    expect(invalid.error.error.message).toBe("messages: text content blocks must be non-empty");
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(), exceptionAfter: 2 });
    const broken = client.messages.stream({ model: "claude-sonnet-4-6", ...params });
    expect(await broken.finalMessage().catch((e) => e)).toBeInstanceOf(Anthropic.APIError);
  });
});
