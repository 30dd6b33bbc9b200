import { afterAll, describe, expect, test } from "bun:test";
import { testApp } from "../lib/app.ts";
import { readSse } from "../lib/gateway.ts";

// No provider keys at all: the mock is always there.
const { json, call } = testApp({ RATE_LIMIT_RPM: "0" });
const ask = (body: object, query = "") => json(`/v1/chat/completions${query}`, body);
const weather = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } }, required: ["city", "days"] } } }];

describe("the built-in mock provider (contract 11)", () => {
  afterAll(() => undefined);

  test("is listed by /v1/models and needs no keys", async () => {
    const ids = ((await (await call("/v1/models")).json()).data as { id: string }[]).map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(["mock", "mock/tools", "mock/slow", "mock/error-429", "mock/error-503"]));
  });

  test("echoes the last user text in each request format, with usage, the same every time", async () => {
    const alpha = await (await ask({ model: "mock", messages: [{ role: "user", content: "first" }, { role: "assistant", content: "x" }, { role: "user", content: "echo me" }] })).json();
    expect(alpha.choices[0].message.content).toBe("echo me");
    expect(alpha.usage).toEqual({ prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
    const again = await (await ask({ model: "mock", messages: [{ role: "user", content: "first" }, { role: "assistant", content: "x" }, { role: "user", content: "echo me" }] })).json();
    expect(again.choices[0].message.content).toBe(alpha.choices[0].message.content);
    const claude = await (await ask({ anthropic_version: "bedrock-2023-05-31", model: "mock", max_tokens: 10, messages: [{ role: "user", content: "hi claude" }] }, "?target_format=beta_messages")).json();
    expect(claude).toMatchObject({ type: "message", model: "mock", content: [{ type: "text", text: "hi claude" }], stop_reason: "end_turn", usage: { output_tokens: 2 } });
    const titan = await (await ask({ model: "mock", inputText: "User: hi titan\nBot:" }, "?target_format=beta_textgen")).json();
    expect(titan.results[0]).toEqual({ tokenCount: 2, outputText: "hi titan", completionReason: "FINISH" });
  });

  test("streams word by word in every reply format", async () => {
    const alpha = await readSse(await ask({ model: "mock", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "one two three" }] }));
    expect(alpha.slice(1, 4).map((e) => e.data.choices[0].delta.content)).toEqual(["one", " two", " three"]);
    expect(alpha.at(-2)!.data.usage.completion_tokens).toBe(3);
    expect(alpha.at(-1)!.data).toBe("[DONE]");
    const claude = await readSse(await ask({ model: "mock", stream: true, messages: [{ role: "user", content: "a b" }] }, "?target_format=beta_messages"));
    expect(claude.map((e) => e.event)).toEqual(["message_start", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    const titan = await readSse(await ask({ model: "mock", stream: true, inputText: "a b" }, "?target_format=beta_textgen"));
    expect(titan.at(-1)!.data.completionReason).toBe("FINISH");
  });

  test("mock/tools calls the first tool with arguments its schema requires; the result comes back as text", async () => {
    const first = await (await ask({ model: "mock/tools", tools: weather, messages: [{ role: "user", content: "Paris" }] })).json();
    const call = first.choices[0].message.tool_calls[0];
    expect(first.choices[0].finish_reason).toBe("tool_calls");
    expect(call.function).toEqual({ name: "get_weather", arguments: '{"city":"mock/tools: Paris","days":0}' });
    const second = await (await ask({
      model: "mock/tools", tools: weather,
      messages: [{ role: "user", content: "Paris" }, first.choices[0].message, { role: "tool", tool_call_id: call.id, content: "sunny" }],
    })).json();
    expect(second.choices[0].message.content).toBe(`Tool ${call.id} returned: sunny`);
    const reminded = await (await ask({
      model: "mock/tools", tools: weather,
      messages: [{ role: "user", content: "Paris" }, first.choices[0].message, { role: "tool", tool_call_id: call.id, content: "sunny" }, { role: "system", content: "Be brief." }],
    })).json();
    expect(reminded.choices[0].message.content).toBe(`Tool ${call.id} returned: sunny`);
    const streamed = await readSse(await ask({ model: "mock/tools", stream: true, tools: weather, messages: [{ role: "user", content: "Paris" }] }, "?target_format=beta_messages"));
    expect(streamed.find((e) => e.event === "content_block_start")!.data.content_block).toMatchObject({ type: "tool_use", name: "get_weather" });
  });

  test("a prompt mock/tools wrote gets text, so an agent's sub-agent started by its tool call does not start another", async () => {
    const agent = [{ name: "Agent", description: "starts a sub-agent with the prompt", input_schema: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] } }];
    const first = await (await json("/v1/messages", { model: "mock/tools", max_tokens: 100, tools: agent, messages: [{ role: "user", content: "say hi" }] })).json();
    expect(first.content[0]).toMatchObject({ type: "tool_use", name: "Agent", input: { prompt: "mock/tools: say hi" } });
    const sub = await (await json("/v1/messages", { model: "mock/tools", max_tokens: 100, tools: agent, messages: [{ role: "user", content: [{ type: "text", text: "<system-reminder>x</system-reminder>" }, { type: "text", text: first.content[0].input.prompt }] }] })).json();
    expect(sub.stop_reason).toBe("end_turn");
    expect(sub.content).toEqual([{ type: "text", text: "mock/tools: this prompt came from a mock/tools call, so no tool was called again." }]);
  });

  test("refuses Anthropic server tools with a 400 in the caller's dialect, as a converted route does", async () => {
    const body = { model: "mock/tools", max_tokens: 10, tools: [{ type: "web_search_20250305", name: "web_search" }], messages: [{ role: "user", content: "hi" }] };
    for (const stream of [false, true]) {
      const refused = await json("/v1/messages", { ...body, stream });
      expect(refused.status).toBe(400);
      const error = await refused.json();
      expect(error).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
      expect(error.error.message).toStartWith("The mock cannot take tools[0] (the server tool web_search_20250305)");
    }
  });

  test("mock/error-429 and mock/error-503 fail like an upstream (after parley's retries)", async () => {
    const limited = await ask({ model: "mock/error-429", messages: [{ role: "user", content: "x" }] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect(limited.headers.get("x-parley-attempts")).toBe("3");
    const down = await ask({ model: "mock/error-503", messages: [{ role: "user", content: "x" }] });
    expect(down.status).toBe(503);
    expect((await down.json()).error.message).toBe("parley mock is unavailable (status 503).");
  });

  test("mock/slow streams a token every 50 ms", async () => {
    const started = performance.now();
    const response = await ask({ model: "mock/slow", stream: true, messages: [{ role: "user", content: "a b c d" }] });
    const arrivals: number[] = [];
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) {
      const text = typeof chunk === "string" ? chunk : decoder.decode(chunk);
      if (text.includes(`"content":"`)) arrivals.push(performance.now() - started);
    }
    expect(arrivals.length).toBeGreaterThanOrEqual(2);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(100);
  });
});

describe("errors say what to change (issue 14)", () => {
  test("an unreachable upstream names the URL and the cause", async () => {
    const app = testApp({ ALPHA_API_KEY: "sk-x", ALPHA_BASE_URL: "http://127.0.0.1:9/v1", UPSTREAM_RETRIES: "0" });
    const error = (await (await app.json("/v1/chat/completions", { model: "gpt-4o", messages: [{ role: "user", content: "x" }] })).json()).error;
    expect(error.message).toStartWith("OpenAI upstream could not be reached at http://127.0.0.1:9/v1: ");
  });

  test("an unknown model mentions MODEL_ROUTES and MODEL_ALIASES", async () => {
    const error = (await (await ask({ model: "llama3.2", messages: [{ role: "user", content: "x" }] })).json()).error;
    expect(error.message).toContain("MODEL_ROUTES");
    expect(error.message).toContain("MODEL_ALIASES");
  });
});
