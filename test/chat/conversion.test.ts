import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { anthropicEvents, anthropicReply, converseEvents, titanReply } from "../lib/fake-bedrock.ts";
import { readSse, startGateway } from "../lib/gateway.ts";
import { expectAnthropicSequence } from "../lib/anthropic-sequence.ts";

const gateway = await startGateway();
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const CLAUDE = "anthropic.claude-3-5-sonnet-20241022-v2:0";
const LLAMA = "meta.llama3-1-70b-instruct-v1:0";
const WEATHER_SCHEMA = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const post = (body: object, target?: string) => gateway.json(`/v1/chat/completions${target ? `?target_format=${target}` : ""}`, body);

describe("tools", () => {
  test("OpenAI tools and tool_choice become Anthropic ones; a tool_use reply becomes tool_calls", async () => {
    gateway.bedrock.next({ kind: "json", body: anthropicReply([{ type: "text", text: "Checking." }, { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Oslo" } }], "tool_use") });
    const response = await post({
      model: CLAUDE,
      messages: [{ role: "user", content: "Weather in Oslo?" }],
      tools: [{ type: "function", function: { name: "get_weather", description: "Current weather", parameters: WEATHER_SCHEMA } }],
      tool_choice: "required",
    });
    expect(gateway.bedrock.last().body).toMatchObject({
      tools: [{ name: "get_weather", description: "Current weather", input_schema: WEATHER_SCHEMA }],
      tool_choice: { type: "any" },
    });
    const body = await response.json();
    expect(body.choices[0].finish_reason).toBe("tool_calls");
    expect(body.choices[0].message.content).toBe("Checking.");
    expect(body.choices[0].message.tool_calls).toEqual([{ id: "toolu_01", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }]);
  });

  test("Anthropic tools and a named tool_choice become OpenAI ones; tool_calls become tool_use blocks", async () => {
    gateway.openai.next({ kind: "reply", toolCalls: [{ id: "call_9", name: "get_weather", arguments: '{"city":"Lima"}' }] });
    const response = await post({
      anthropic_version: "bedrock-2023-05-31", model: "gpt-4o", max_tokens: 100,
      messages: [{ role: "user", content: "Weather in Lima?" }],
      tools: [{ name: "get_weather", description: "Current weather", input_schema: WEATHER_SCHEMA }],
      tool_choice: { type: "tool", name: "get_weather" },
    }, "beta_messages");
    expect(gateway.openai.last().body).toMatchObject({
      tools: [{ type: "function", function: { name: "get_weather", description: "Current weather", parameters: WEATHER_SCHEMA } }],
      tool_choice: { type: "function", function: { name: "get_weather" } },
    });
    const body = await response.json();
    expect(body.stop_reason).toBe("tool_use");
    expect(body.content).toEqual([{ type: "tool_use", id: "call_9", name: "get_weather", input: { city: "Lima" }, caller: { type: "direct" } }]);
  });

  test("tool_choice auto and none map both ways", async () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object" } } }];
    await post({ model: CLAUDE, messages: [{ role: "user", content: "x" }], tools, tool_choice: "auto" });
    expect(gateway.bedrock.last().body.tool_choice).toEqual({ type: "auto" });
    await post({ anthropic_version: "x", model: "gpt-4o", messages: [{ role: "user", content: "x" }], tools: [{ name: "f", input_schema: { type: "object" } }], tool_choice: { type: "none" } });
    expect(gateway.openai.last().body.tool_choice).toBe("none");
  });

  test("an OpenAI tool-call history becomes tool_use blocks and one user message of tool_result blocks", async () => {
    await post({
      model: CLAUDE,
      messages: [
        { role: "user", content: "Weather in Oslo and Lima?" },
        { role: "assistant", content: null, tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
          { id: "call_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Lima"}' } },
        ] },
        { role: "tool", tool_call_id: "call_1", content: "3°C" },
        { role: "tool", tool_call_id: "call_2", content: "21°C" },
      ],
    });
    expect(gateway.bedrock.last().body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Oslo and Lima?" }] },
      { role: "assistant", content: [
        { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Oslo" } },
        { type: "tool_use", id: "call_2", name: "get_weather", input: { city: "Lima" } },
      ] },
      { role: "user", content: [
        { type: "tool_result", tool_use_id: "call_1", content: "3°C" },
        { type: "tool_result", tool_use_id: "call_2", content: "21°C" },
      ] },
    ]);
  });

  test("an Anthropic tool history becomes OpenAI tool_calls and tool messages", async () => {
    await post({
      anthropic_version: "bedrock-2023-05-31", model: "gpt-4o", max_tokens: 10,
      messages: [
        { role: "user", content: "Weather?" },
        { role: "assistant", content: [{ type: "text", text: "Let me look." }, { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "3°C" }] }, { type: "text", text: "Thanks" }] },
      ],
    });
    expect(gateway.openai.last().body.messages).toEqual([
      { role: "user", content: "Weather?" },
      { role: "assistant", content: "Let me look.", tool_calls: [{ id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
      { role: "tool", tool_call_id: "toolu_1", content: "3°C" },
      { role: "user", content: "Thanks" },
    ]);
  });

  test("streamed OpenAI tool calls become tool_use blocks with input_json_delta", async () => {
    gateway.openai.next({ kind: "stream", chunks: ["On it."], toolCalls: [{ id: "call_7", name: "get_weather", arguments: ['{"ci', 'ty":"Oslo"}'] }] });
    const events = await readSse(await post({ model: "gpt-4o", stream: true, messages: [{ role: "user", content: "x" }] }, "beta_messages"));
    expectAnthropicSequence(events);
    const start = events.find((e) => e.data.content_block?.type === "tool_use")!;
    expect(start.data.content_block).toEqual({ type: "tool_use", id: "call_7", name: "get_weather", input: {}, caller: { type: "direct" } });
    const json = events.filter((e) => e.data.delta?.type === "input_json_delta" && e.data.index === start.data.index).map((e) => e.data.delta.partial_json).join("");
    expect(JSON.parse(json)).toEqual({ city: "Oslo" });
    expect(events.find((e) => e.event === "message_delta")!.data.delta.stop_reason).toBe("tool_use");
  });

  test("streamed Bedrock tool_use becomes OpenAI delta.tool_calls", async () => {
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(["Sure."], { id: "toolu_5", name: "get_weather", json: ['{"city":', '"Rome"}'] }) });
    const events = await readSse(await post({ model: CLAUDE, stream: true, messages: [{ role: "user", content: "x" }] }));
    const calls = events.slice(0, -1).flatMap((e) => e.data.choices[0].delta.tool_calls ?? []);
    expect(calls[0]).toEqual({ index: 0, id: "toolu_5", type: "function", function: { name: "get_weather", arguments: "" } });
    expect(calls.slice(1).map((c: any) => c.function.arguments).join("")).toBe('{"city":"Rome"}');
    expect(events.at(-2)!.data.choices[0].finish_reason).toBe("tool_calls");
  });

  test("streamed Converse tool use becomes Anthropic tool_use blocks", async () => {
    gateway.bedrock.next({ kind: "stream", events: converseEvents(["Hm."], { id: "tooluse_1", name: "lookup", json: ['{"q":', '"x"}'] }) });
    const events = await readSse(await post({ model: LLAMA, stream: true, messages: [{ role: "user", content: "x" }] }, "beta_messages"));
    expectAnthropicSequence(events);
    expect(events.find((e) => e.data.content_block?.type === "tool_use")!.data.content_block.name).toBe("lookup");
    expect(events.find((e) => e.event === "message_delta")!.data.delta.stop_reason).toBe("tool_use");
  });
});

describe("images", () => {
  test("an OpenAI data URL becomes an Anthropic base64 image, and back", async () => {
    await post({ model: CLAUDE, messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: `data:image/png;base64,${PIXEL}` } }] }] });
    expect(gateway.bedrock.last().body.messages[0].content).toEqual([
      { type: "text", text: "What is this?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PIXEL } },
    ]);
    await post({ anthropic_version: "x", model: "gpt-4o", messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: PIXEL } }] }] });
    expect(gateway.openai.last().body.messages[0].content).toEqual([{ type: "image_url", image_url: { url: `data:image/png;base64,${PIXEL}` } }]);
  });

  test("an image goes to Converse as bytes", async () => {
    await post({ model: LLAMA, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${PIXEL}` } }] }] });
    expect(gateway.bedrock.last().body.messages[0].content[0]).toEqual({ image: { format: "png", source: { bytes: PIXEL } } });
  });

  test("a remote image URL for Bedrock is refused with 400 and nothing is sent", async () => {
    const response = await post({ model: CLAUDE, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }] });
    expect(response.status).toBe(400);
    expect((await response.json()).error.type).toBe("invalid_request_error");
    expect(gateway.bedrock.received).toHaveLength(0);
  });

  test("a remote image URL goes to OpenAI as it is", async () => {
    await post({ anthropic_version: "x", model: "gpt-4o", messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/cat.png" } }] }] });
    expect(gateway.openai.last().body.messages[0].content).toEqual([{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }]);
  });
});

describe("system, transcript and stop reasons", () => {
  test("system and developer messages are joined by a blank line into Anthropic's system", async () => {
    await post({ model: CLAUDE, messages: [{ role: "system", content: "A." }, { role: "developer", content: "B." }, { role: "user", content: "x" }] });
    expect(gateway.bedrock.last().body.system).toBe("A.\n\nB.");
    expect(gateway.bedrock.last().body.max_tokens).toBe(4096);
  });

  test("a system message inside the conversation stays in place for OpenAI; Bedrock takes it on top", async () => {
    const conversation = [
      { role: "system", content: "A." }, { role: "user", content: "x" }, { role: "assistant", content: "y" },
      { role: "developer", content: "Answer in French from now on." }, { role: "user", content: "z" },
    ];
    await post({ model: CLAUDE, messages: conversation });
    expect(gateway.bedrock.last().body.system).toBe("A.\n\nAnswer in French from now on.");
    expect(gateway.bedrock.last().body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "x" }] }, { role: "assistant", content: [{ type: "text", text: "y" }] }, { role: "user", content: [{ type: "text", text: "z" }] },
    ]);
    await post({ model: LLAMA, messages: conversation });
    expect(gateway.bedrock.last().body.system).toEqual([{ text: "A." }, { text: "Answer in French from now on." }]);
    expect(gateway.bedrock.last().body.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user"]);
    await post({ model: "amazon.titan-text-lite-v1", messages: conversation });
    expect(gateway.bedrock.last().body.inputText).toBe("A.\n\nAnswer in French from now on.\n\nUser: x\nBot: y\nUser: z\nBot:");
    await post({
      anthropic_version: "bedrock-2023-05-31", model: "gpt-4o", max_tokens: 10, system: "A.",
      messages: [{ role: "user", content: "x" }, { role: "assistant", content: "y" }, { role: "system", content: "Answer in French from now on." }, { role: "user", content: "z" }],
    });
    expect(gateway.openai.last().body.messages).toEqual([
      { role: "system", content: "A." }, { role: "user", content: "x" }, { role: "assistant", content: "y" },
      { role: "system", content: "Answer in French from now on." }, { role: "user", content: "z" },
    ]);
  });

  test("turns of one role either side of a system message: one turn for Claude, two lines for Titan", async () => {
    const conversation = [{ role: "user", content: "x" }, { role: "system", content: "Be brief." }, { role: "user", content: "z" }];
    await post({ model: CLAUDE, messages: conversation });
    expect(gateway.bedrock.last().body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "x" }, { type: "text", text: "z" }] }]);
    await post({ model: "amazon.titan-text-lite-v1", messages: conversation });
    expect(gateway.bedrock.last().body.inputText).toBe("Be brief.\n\nUser: x\nUser: z\nBot:");
  });

  test("a conversation becomes a Titan User:/Bot: transcript ending with Bot:", async () => {
    await post({ model: "amazon.titan-text-lite-v1", messages: [
      { role: "system", content: "Be kind." }, { role: "user", content: "Hi" }, { role: "assistant", content: "Hello!" }, { role: "user", content: "How are you?" },
    ] });
    expect(gateway.bedrock.last().body.inputText).toBe("Be kind.\n\nUser: Hi\nBot: Hello!\nUser: How are you?\nBot:");
  });

  test("a Titan transcript decodes into turns for another upstream; plain text is one user message", async () => {
    await post({ model: "gpt-4o", inputText: "Be kind.\n\nUser: Hi\nBot: Hello!\nUser: How are you?\nBot:" });
    expect(gateway.openai.last().body.messages).toEqual([
      { role: "system", content: "Be kind." }, { role: "user", content: "Hi" }, { role: "assistant", content: "Hello!" }, { role: "user", content: "How are you?" },
    ]);
    await post({ model: "gpt-4o", inputText: "Write a haiku" });
    expect(gateway.openai.last().body.messages).toEqual([{ role: "user", content: "Write a haiku" }]);
  });

  test("a stop sequence hit maps to stop / stop_sequence / STOP_CRITERIA_MET", async () => {
    const hit = { ...anthropicReply(), stop_reason: "stop_sequence", stop_sequence: "END" };
    gateway.bedrock.next({ kind: "json", body: hit }, { kind: "json", body: hit }, { kind: "json", body: hit });
    const body = { model: CLAUDE, stop: ["END"], messages: [{ role: "user", content: "x" }] };
    expect((await (await post(body)).json()).choices[0].finish_reason).toBe("stop");
    expect(gateway.bedrock.last().body.stop_sequences).toEqual(["END"]);
    const anthropic = await (await post(body, "beta_messages")).json();
    expect([anthropic.stop_reason, anthropic.stop_sequence]).toEqual(["stop_sequence", "END"]);
    expect((await (await post(body, "beta_textgen")).json()).results[0].completionReason).toBe("STOP_CRITERIA_MET");
  });

  test("length and content filter map across all three formats", async () => {
    gateway.bedrock.next({ kind: "json", body: titanReply("cut", "LENGTH") }, { kind: "json", body: titanReply("cut", "LENGTH") });
    const titan = { model: "amazon.titan-text-express-v1", messages: [{ role: "user", content: "x" }] };
    expect((await (await post(titan)).json()).choices[0].finish_reason).toBe("length");
    expect((await (await post(titan, "beta_messages")).json()).stop_reason).toBe("max_tokens");
    gateway.openai.next({ kind: "reply", text: "", finish: "content_filter" }, { kind: "reply", text: "", finish: "content_filter" });
    const openai = { model: "gpt-4o", messages: [{ role: "user", content: "x" }] };
    expect((await (await post(openai, "beta_messages")).json()).stop_reason).toBe("refusal");
    expect((await (await post(openai, "beta_textgen")).json()).results[0].completionReason).toBe("CONTENT_FILTERED");
  });
});

describe("routing and aliases", () => {
  test("region-prefixed ids and ARNs are sent to Bedrock as given", async () => {
    for (const model of ["us.anthropic.claude-sonnet-4-20250514-v1:0", "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0"]) {
      expect((await post({ model, messages: [{ role: "user", content: "x" }] })).status).toBe(200);
      expect(gateway.bedrock.last()).toMatchObject({ modelId: model, action: "invoke" });
    }
    const arn = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123";
    await post({ model: arn, messages: [{ role: "user", content: "x" }] });
    expect(gateway.bedrock.last()).toMatchObject({ modelId: arn, action: "converse" });
  });

  test("a configured alias and route come before the built-in patterns; the reply names the alias", async () => {
    const aliased = await startGateway({ MODEL_ALIASES: "fast=gpt-4o-mini,claude=" + CLAUDE, MODEL_ROUTES: "llama*=alpha" });
    try {
      const reply = await (await aliased.json("/v1/chat/completions", { model: "fast", messages: [{ role: "user", content: "x" }] })).json();
      expect(aliased.openai.last().body.model).toBe("gpt-4o-mini");
      expect(reply.model).toBe("fast");
      await aliased.json("/v1/chat/completions", { model: "claude", messages: [{ role: "user", content: "x" }] });
      expect(aliased.bedrock.last().modelId).toBe(CLAUDE);
      await aliased.json("/v1/chat/completions", { model: "llama3.2", messages: [{ role: "user", content: "x" }] });
      expect(aliased.openai.last().body.model).toBe("llama3.2");
    } finally {
      await aliased.stop();
    }
  });

  test("without a model, DEFAULT_ALPHA_MODEL is used", async () => {
    const defaulted = await startGateway({ DEFAULT_ALPHA_MODEL: "gpt-4o-mini" });
    try {
      const response = await defaulted.json("/v1/chat/completions", { messages: [{ role: "user", content: "x" }] });
      expect(response.status).toBe(200);
      expect(defaulted.openai.last().body.model).toBe("gpt-4o-mini");
    } finally {
      await defaulted.stop();
    }
  });
});
