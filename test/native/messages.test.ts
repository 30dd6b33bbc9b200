import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { expectAnthropicSequence } from "../lib/anthropic-sequence.ts";
import { anthropicEvents, anthropicReply, thinkingEvents } from "../lib/fake-bedrock.ts";
import { readSse, startGateway } from "../lib/gateway.ts";
import { anthropic } from "../../src/wire/anthropic/codec.ts";

const gateway = await startGateway({ UPSTREAM_RETRIES: "0" });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const ANTHROPIC = { "anthropic-version": "2023-06-01" };
const messages = (body: unknown, headers: Record<string, string> = {}, path = "/v1/messages") =>
  gateway.json(path, body, { headers: { ...ANTHROPIC, ...headers } });

/** What Claude Code sends, and more: every field here must reach Bedrock as it is. */
const RICH = {
  model: "claude-sonnet-4-5",
  max_tokens: 2048,
  system: [
    { type: "text", text: "You are a coding agent.", cache_control: { type: "ephemeral" } },
    { type: "text", text: "Be brief.", cache_control: { type: "ephemeral", ttl: "1h" } },
  ],
  messages: [
    {
      role: "user",
      content: [
        { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0xLjQK" }, title: "spec.pdf", cache_control: { type: "ephemeral" } },
        { type: "text", text: "Read the spec." },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "The user wants a summary.", signature: "EqQBCkYIARgCIkDsig1==" },
        { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" },
        { type: "tool_use", id: "toolu_01", name: "read_file", input: { path: "spec.pdf" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: [{ type: "text", text: "contents" }], cache_control: { type: "ephemeral" } }] },
  ],
  tools: [
    { name: "read_file", description: "Read a file", input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }, cache_control: { type: "ephemeral" } },
    { type: "web_search_20250305", name: "web_search", max_uses: 3 },
  ],
  tool_choice: { type: "auto", disable_parallel_tool_use: true },
  thinking: { type: "enabled", budget_tokens: 1024 },
  metadata: { user_id: "user-123" },
  context_management: { edits: [{ type: "clear_tool_uses_20250919" }] },
  a_field_parley_does_not_know: { nested: [1, 2.5, "x", null] },
};

describe("Anthropic client to Bedrock Claude: lossless", () => {
  test("the body reaches Bedrock minus model/stream, plus anthropic_version and the betas Bedrock takes", async () => {
    const response = await messages(RICH, { "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14,oauth-2025-04-20,context-management-2025-06-27" });
    expect(response.status).toBe(200);
    const received = gateway.bedrock.last();
    expect(received.action).toBe("invoke");
    expect(received.modelId).toBe("us.anthropic.claude-sonnet-4-5-20250929-v1:0");
    const { model: _model, ...rest } = RICH;
    expect(received.body).toEqual({ anthropic_version: "bedrock-2023-05-31", anthropic_beta: ["interleaved-thinking-2025-05-14", "context-management-2025-06-27"], ...rest });
    const reply = await response.json();
    expect(reply).toEqual({ ...anthropicReply(), model: "claude-sonnet-4-5" });
    expect(response.headers.get("request-id")).toBe(response.headers.get("x-request-id"));
  });

  test("the client's own text goes up: written as it came (spacing, escapes, key order), model and stream cut out", async () => {
    // Tool schemas may name properties `model` and `stream`: only the top level's go.
    const tool = { name: "run", input_schema: { type: "object", properties: { model: { type: "string" }, stream: { type: "boolean" } } } };
    const members = `"max_tokens": 64,\n  "messages": [{"role": "user", "content": "caf\\u00e9 \\/ \\"q\\""}],\n  "tools": ${JSON.stringify([tool])}`;
    for (const [stream, path] of [["", "invoke"], [',\n  "stream": true', "invoke-with-response-stream"], [', "stream" : false', "invoke"]] as const) {
      const raw = `{\n  "model": "claude-sonnet-4-5",\n  ${members}${stream}\n}\n`;
      const response = await gateway.call("/v1/messages", { method: "POST", body: raw, headers: { ...ANTHROPIC, "content-type": "application/json", "anthropic-beta": "interleaved-thinking-2025-05-14" } });
      expect(response.status).toBe(200);
      await response.text();
      expect(gateway.bedrock.last().action).toBe(path);
      expect(gateway.bedrock.last().text).toBe(`{"anthropic_version":"bedrock-2023-05-31","anthropic_beta":["interleaved-thinking-2025-05-14"],${members}}`);
    }
  });

  test("a body whose model is not its first member, or that sends anthropic_version itself, is written anew, to the same effect", async () => {
    const { model, ...rest } = RICH;
    for (const body of [{ ...rest, model }, { model, anthropic_version: "bedrock-2023-05-31", ...rest }, { model, stream: false, ...rest }]) {
      const response = await messages(body);
      expect(response.status).toBe(200);
      expect(gateway.bedrock.last().body).toEqual({ anthropic_version: "bedrock-2023-05-31", ...rest });
    }
  });

  test("stream events are relayed as Bedrock sent them, message_start naming the model asked for", async () => {
    const events = thinkingEvents();
    gateway.bedrock.next({ kind: "stream", events });
    const response = await messages({ model: "claude-sonnet-4-5-20250929", max_tokens: 64, stream: true, thinking: { type: "enabled", budget_tokens: 1024 }, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const expected = events.map((e) => {
      const data = e.type === "message_start" ? { ...e, message: { ...e.message, model: "claude-sonnet-4-5-20250929" } } : e;
      return `event: ${e.type}\ndata: ${JSON.stringify(data)}\n\n`;
    }).join("");
    expect(await response.text()).toBe(expected);
    expect(gateway.bedrock.last().action).toBe("invoke-with-response-stream");
    expect(gateway.bedrock.last().body.stream).toBeUndefined();
  });

  test("a Bedrock 400 keeps its status and its message, word for word", async () => {
    const message = "input length and `max_tokens` exceed context limit: 199000 + 21333 > 200000, decrease input length or `max_tokens` and try again";
    gateway.bedrock.next({ kind: "error", status: 400, type: "ValidationException", message });
    const response = await messages({ model: "claude-sonnet-4-5", max_tokens: 21333, messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ type: "error", error: { type: "invalid_request_error", message } });
    expect(response.headers.get("request-id")).toBeTruthy();
  });

  test("a stream that breaks ends with Anthropic's error event", async () => {
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(), exceptionAfter: 3 });
    const response = await messages({ model: "claude-haiku-4-5", max_tokens: 64, stream: true, messages: [{ role: "user", content: "hi" }] });
    const events = await readSse(response);
    expect(events.at(-1)!.event).toBe("error");
    expect(events.at(-1)!.data.type).toBe("error");
    expect(events.at(-1)!.data.error.type).toBe("api_error");
  });

  test("an event that is not one of Anthropic's never reaches the client: the stream ends with an error event", async () => {
    const events = anthropicEvents();
    events.splice(2, 0, { no: "type" }, { type: 42 });
    gateway.bedrock.next({ kind: "stream", events });
    const response = await messages({ model: "claude-haiku-4-5", max_tokens: 64, stream: true, messages: [{ role: "user", content: "hi" }] });
    const received = await readSse(response);
    expect(received.map((event) => event.event)).toEqual(["message_start", "content_block_start", "error"]);
    expect(received.at(-1)!.data.error.type).toBe("api_error");
  });

  test("text beyond ASCII (accents, CJK, emoji) is relayed as Bedrock encoded it", async () => {
    const events = anthropicEvents(["naïve ", "日本語 ", "😀 done"]);
    gateway.bedrock.next({ kind: "stream", events });
    const response = await messages({ model: "claude-haiku-4-5", max_tokens: 64, stream: true, messages: [{ role: "user", content: "hi" }] });
    const bytes = new Uint8Array(await response.arrayBuffer());
    const deltas = events.filter((e) => e.type === "content_block_delta").map((e) => `event: content_block_delta\ndata: ${JSON.stringify(e)}\n\n`);
    for (const delta of deltas) expect(Buffer.from(bytes).includes(Buffer.from(delta))).toBe(true);
    const received = await readSse(new Response(bytes));
    expect(received.filter((e) => e.event === "content_block_delta").map((e) => e.data.delta.text).join("")).toBe("naïve 日本語 😀 done");
  });

  test.each([
    ["bytes that are not base64", { bytes: "%%% not base64 %%%" }],
    ["no bytes at all", { p: "abc" }],
  ])("a chunk with %s ends the stream with an error event", async (_, payload) => {
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(), rawChunk: { at: 2, payload } });
    const response = await messages({ model: "claude-haiku-4-5", max_tokens: 64, stream: true, messages: [{ role: "user", content: "hi" }] });
    const received = await readSse(response);
    expect(received.map((event) => event.event)).toEqual(["message_start", "content_block_start", "error"]);
    expect(received.at(-1)!.data.error.type).toBe("api_error");
  });

  test("BETA_ANTHROPIC_BETAS replaces the built-in list; MODEL_ALIASES wins over Anthropic's names", async () => {
    const own = await startGateway({ BETA_ANTHROPIC_BETAS: "claude-code-20250219", MODEL_ALIASES: "claude-opus-4-1=eu.anthropic.claude-opus-4-1-20250805-v1:0" });
    try {
      const response = await own.json("/v1/messages", { model: "claude-opus-4-1", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }, { headers: { "anthropic-beta": "claude-code-20250219, interleaved-thinking-2025-05-14" } });
      expect(response.status).toBe(200);
      expect(own.bedrock.last().modelId).toBe("eu.anthropic.claude-opus-4-1-20250805-v1:0");
      expect(own.bedrock.last().body.anthropic_beta).toEqual(["claude-code-20250219"]);
      expect((await response.json()).model).toBe("claude-opus-4-1");
    } finally {
      await own.stop();
    }
  });

  test("a Claude name newer than the table: <geo>.anthropic.<name>, every beta but api.anthropic.com's own", async () => {
    const body = { model: "claude-opus-4-8", max_tokens: 10, messages: [{ role: "user", content: "hi" }, { role: "system", content: "mid-conversation note" }], output_config: { effort: "high" } };
    const response = await messages(body, { "anthropic-beta": "claude-code-20250219,oauth-2025-04-20,context-1m-2025-08-07,mid-conversation-system-2026-04-07" });
    expect(response.status).toBe(200);
    const received = gateway.bedrock.last();
    expect(received.modelId).toBe("us.anthropic.claude-opus-4-8");
    expect(received.body.anthropic_beta).toEqual(["context-1m-2025-08-07", "mid-conversation-system-2026-04-07"]);
    expect(received.body.messages).toEqual(body.messages);
    expect(received.body.output_config).toEqual({ effort: "high" });
  });

  test("a claude-* name an OpenAI-compatible upstream lists goes there (discovery before Anthropic's names)", async () => {
    const local = await startGateway({ MODELS_REFRESH_S: "600" });
    try {
      local.openai.catalogue.ids = ["claude-sonnet-4-5", "qwen2.5-coder:7b"];
      const body = { model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };
      let response = await local.json("/v1/messages", body);
      for (let i = 0; i < 200 && local.openai.received.length === 0; i++) {
        await Bun.sleep(50);
        response = await local.json("/v1/messages", body);
      }
      expect(response.status).toBe(200);
      expect(local.openai.last().body.model).toBe("claude-sonnet-4-5");
      expect((await local.call("/v1/models/qwen2.5-coder:7b", { headers: ANTHROPIC })).status).toBe(200);
      const count = await local.json("/v1/messages/count_tokens", { model: "qwen2.5-coder:7b", messages: [{ role: "user", content: "hi" }] });
      expect(count.status).toBe(200);
      expect(count.headers.get("x-parley-token-count")).toBe("estimate");
    } finally {
      await local.stop();
    }
  });

  test("the geography of BETA_REGION picks the inference profile", async () => {
    const eu = await startGateway({ BETA_REGION: "eu-west-1" });
    try {
      await eu.json("/v1/messages", { model: "claude-3-5-haiku-latest", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
      expect(eu.bedrock.last().modelId).toBe("eu.anthropic.claude-3-5-haiku-20241022-v1:0");
    } finally {
      await eu.stop();
    }
  });
});

describe("Anthropic client to an OpenAI model, through the IR", () => {
  const image = { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } };
  const body = {
    model: "gpt-4o",
    max_tokens: 300,
    system: [{ type: "text", text: "Be terse.", cache_control: { type: "ephemeral" } }, { type: "text", text: "Use tools." }],
    stop_sequences: ["END"],
    tools: [{ name: "get_weather", description: "Weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }],
    tool_choice: { type: "any", disable_parallel_tool_use: true },
    metadata: { user_id: "u1" },
    messages: [{ role: "user", content: [{ type: "text", text: "Weather here?" }, image] }],
  };

  test("tools, images, system and stop go up; the tool call and exact usage come back", async () => {
    gateway.openai.next({ kind: "reply", toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' }], usage: [120, 15] });
    const response = await messages(body);
    expect(response.status).toBe(200);
    const sent = gateway.openai.last().body;
    expect(sent.messages).toEqual([
      { role: "system", content: "Be terse." },
      { role: "system", content: "Use tools." },
      { role: "user", content: [{ type: "text", text: "Weather here?" }, { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }] },
    ]);
    expect(sent.stop).toEqual(["END"]);
    expect(sent.max_tokens).toBe(300);
    expect(sent.tool_choice).toBe("required");
    expect(sent.parallel_tool_calls).toBe(false);
    expect(sent.tools[0].function.name).toBe("get_weather");
    const reply = await response.json();
    expect(reply.model).toBe("gpt-4o");
    expect(reply.content).toEqual([{ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" }, caller: { type: "direct" } }]);
    expect(reply.stop_reason).toBe("tool_use");
    expect(reply.usage).toEqual({ input_tokens: 120, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 15 });
  });

  test("streamed: Anthropic's grammar, text then the tool call, usage in message_delta", async () => {
    gateway.openai.next({ kind: "stream", chunks: ["Let me", " check."], toolCalls: [{ id: "call_2", name: "get_weather", arguments: ['{"city":', '"Oslo"}'] }], usage: [50, 9] });
    const response = await messages({ ...body, stream: true });
    const events = await readSse(response);
    expectAnthropicSequence(events);
    expect(events.filter((e) => e.data.delta?.type === "text_delta").map((e) => e.data.delta.text).join("")).toBe("Let me check.");
    expect(events.filter((e) => e.data.delta?.type === "input_json_delta").map((e) => e.data.delta.partial_json).join("")).toBe('{"city":"Oslo"}');
    const delta = events.find((e) => e.event === "message_delta")!.data;
    expect(delta.delta.stop_reason).toBe("tool_use");
    expect(delta.usage).toEqual({ input_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 9 });
  });

  test("a stop sequence and a history of thinking blocks: the thinking is dropped, the answer stands", async () => {
    const history = {
      model: "gpt-4o", max_tokens: 50,
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: [{ type: "thinking", thinking: "hmm", signature: "sig" }, { type: "text", text: "hello" }] },
        { role: "user", content: "again" },
      ],
    };
    const response = await messages(history);
    expect(response.status).toBe(200);
    expect(gateway.openai.last().body.messages[1]).toEqual({ role: "assistant", content: "hello" });
  });

  test("a mid-conversation system message that is not text: 422 in Anthropic's envelope naming it", async () => {
    const response = await messages({ model: "gpt-4o", max_tokens: 10, messages: [{ role: "user", content: "hi" }, { role: "system", content: [{ type: "image", source: {} }] }] });
    expect(response.status).toBe(422);
    const error = await response.json();
    expect(error.type).toBe("error");
    expect(error.error.type).toBe("invalid_request_error");
    expect(error.error.message).toContain("messages[1].content");
    expect(gateway.openai.received.length).toBe(0);
  });

  test("an empty mid-conversation system message is left out", async () => {
    await messages({ model: "gpt-4o", max_tokens: 10, messages: [{ role: "user", content: "hi" }, { role: "system", content: "" }, { role: "system", content: [] }] });
    expect(gateway.openai.last().body.messages).toEqual([{ role: "user", content: "hi" }]);
  });

  test("a mid-conversation system message stays where it was said (OpenAI takes system messages anywhere)", async () => {
    await messages({
      model: "gpt-4o", max_tokens: 10, system: "First.",
      messages: [{ role: "user", content: "hi" }, { role: "system", content: [{ type: "text", text: "Second." }, { type: "text", text: "Third." }] }],
    });
    expect(gateway.openai.last().body.messages).toEqual([
      { role: "system", content: "First." }, { role: "user", content: "hi" },
      { role: "system", content: [{ type: "text", text: "Second." }, { type: "text", text: "Third." }] },
    ]);
  });

  test("ALPHA_SYSTEM_MESSAGES=top: for a chat template that refuses them, one system text on top and alternating turns", async () => {
    const strict = await startGateway({ ALPHA_SYSTEM_MESSAGES: "top" });
    try {
      await strict.json("/v1/messages", {
        model: "gpt-4o", max_tokens: 10, system: "First.",
        messages: [{ role: "user", content: "hi" }, { role: "system", content: "Second." }, { role: "user", content: "go on" }],
      });
      expect(strict.openai.last().body.messages).toEqual([{ role: "system", content: "First.\n\nSecond." }, { role: "user", content: "hi\n\ngo on" }]);
    } finally {
      await strict.stop();
    }
  });

  test("a server tool cannot be converted: 400 naming it", async () => {
    const response = await messages({ ...body, tools: [...body.tools, { type: "web_search_20250305", name: "web_search" }] });
    expect(response.status).toBe(400);
    const error = await response.json();
    expect(error.type).toBe("error");
    expect(error.error.type).toBe("invalid_request_error");
    expect(error.error.message).toContain("tools[1] (the server tool web_search_20250305)");
    expect(gateway.openai.received.length).toBe(0);
  });

  test("cached prompt tokens from OpenAI come back as cache_read_input_tokens", async () => {
    gateway.openai.next({ kind: "raw", body: JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", created: 1, model: "gpt-4o", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }], usage: { prompt_tokens: 2000, completion_tokens: 3, total_tokens: 2003, prompt_tokens_details: { cached_tokens: 1536 } } }) });
    const reply = await (await messages({ model: "gpt-4o", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })).json();
    expect(reply.usage).toEqual({ input_tokens: 464, cache_creation_input_tokens: 0, cache_read_input_tokens: 1536, output_tokens: 3 });
  });

  test("a document (PDF) goes to OpenAI as a file part", async () => {
    await messages({ model: "gpt-4o", max_tokens: 10, messages: [{ role: "user", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" }, title: "a.pdf" }, { type: "text", text: "sum up" }] }] });
    expect(gateway.openai.last().body.messages[0].content[0]).toEqual({ type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } });
  });
});

describe("usage and output shape across families", () => {
  test("an OpenAI client to Claude: cached tokens counted in prompt_tokens and named in prompt_tokens_details", async () => {
    gateway.bedrock.next({ kind: "json", body: { ...anthropicReply(), usage: { input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 1000, output_tokens: 5 } } });
    const reply = await (await gateway.json("/v1/chat/completions", { model: "claude-haiku-4-5", messages: [{ role: "user", content: "hi" }] })).json();
    expect(reply.usage).toEqual({ prompt_tokens: 1210, completion_tokens: 5, total_tokens: 1215, prompt_tokens_details: { cached_tokens: 1000 } });
  });

  test("an OpenAI client's parallel_tool_calls: false reaches Claude as disable_parallel_tool_use", async () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object" } } }];
    await gateway.json("/v1/chat/completions", { model: "claude-haiku-4-5", parallel_tool_calls: false, tools, messages: [{ role: "user", content: "x" }] });
    expect(gateway.bedrock.last().body.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
  });

  test("an Anthropic client's output_format to OpenAI becomes response_format", async () => {
    const schema = { type: "object", properties: { ok: { type: "boolean" } } };
    await messages({ model: "gpt-4o", max_tokens: 10, output_format: { type: "json_schema", schema }, messages: [{ role: "user", content: "x" }] });
    expect(gateway.openai.last().body.response_format).toEqual({ type: "json_schema", json_schema: { name: "output", schema, strict: true } });
  });
});

describe("usage of a stream passed through, from its last events", () => {
  const sse = (events: object[]) => events.map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`).join("");

  test("Bedrock's invocation metrics on message_stop, the cache counted beside the input", () => {
    expect(anthropic.usageIn!(sse(thinkingEvents().slice(-3)))).toEqual({ input: { total: 120, cacheRead: 100, cacheWrite: 0 }, output: 9 });
  });

  test("else message_delta's usage, cached tokens counted in", () => {
    const tail = sse([{ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { input_tokens: 5, cache_read_input_tokens: 50, output_tokens: 7 } }, { type: "message_stop" }]);
    expect(anthropic.usageIn!(tail)).toEqual({ input: { total: 55, cacheRead: 50, cacheWrite: 0 }, output: 7 });
    expect(anthropic.usageIn!(sse([{ type: "message_stop" }]))).toBeUndefined();
  });
});

describe("Anthropic client to the mock", () => {
  test("not streamed: the echo, with usage", async () => {
    const reply = await (await messages({ model: "mock", max_tokens: 10, messages: [{ role: "user", content: "say hi" }] })).json();
    expect(reply.type).toBe("message");
    expect(reply.content).toEqual([{ type: "text", text: "say hi" }]);
    expect(reply.stop_reason).toBe("end_turn");
    expect(reply.usage.output_tokens).toBe(2);
  });

  test("streamed, with a tool", async () => {
    const response = await messages({
      model: "mock/tools", max_tokens: 10, stream: true, messages: [{ role: "user", content: "go" }],
      tools: [{ name: "run", input_schema: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] } }],
    });
    const events = await readSse(response);
    expectAnthropicSequence(events);
    expect(events.find((e) => e.event === "content_block_start")!.data.content_block).toEqual({ type: "tool_use", id: "call_mock_0001", name: "run", input: {}, caller: { type: "direct" } });
    expect(events.find((e) => e.event === "message_delta")!.data.delta.stop_reason).toBe("tool_use");
  });
});

describe("response_format from an OpenAI client to Claude: a forced tool, answered as text", () => {
  const format = { type: "json_schema", json_schema: { name: "city", schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } } };

  test("not streamed", async () => {
    gateway.bedrock.next({ kind: "json", body: anthropicReply([{ type: "tool_use", id: "toolu_9", name: "json_response", input: { name: "Paris" } }], "tool_use") });
    const response = await gateway.json("/v1/chat/completions", { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "Capital of France?" }], response_format: format });
    expect(response.status).toBe(200);
    const sent = gateway.bedrock.last().body;
    expect(sent.tools).toEqual([{ name: "json_response", description: "Answer in the JSON format 'city'.", input_schema: format.json_schema.schema }]);
    expect(sent.tool_choice).toEqual({ type: "tool", name: "json_response" });
    const reply = await response.json();
    expect(reply.choices[0].message.content).toBe('{"name":"Paris"}');
    expect(reply.choices[0].message.tool_calls).toBeUndefined();
    expect(reply.choices[0].finish_reason).toBe("stop");
  });

  test("streamed", async () => {
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents([], { id: "toolu_9", name: "json_response", json: ['{"name":', '"Paris"}'] }) });
    const response = await gateway.json("/v1/chat/completions", { model: "claude-sonnet-4-5", stream: true, messages: [{ role: "user", content: "Capital?" }], response_format: format });
    const events = await readSse(response);
    const text = events.filter((e) => e.data?.choices?.[0]?.delta?.content).map((e) => e.data.choices[0].delta.content).join("");
    expect(text).toBe('{"name":"Paris"}');
    expect(events.some((e) => e.data?.choices?.[0]?.delta?.tool_calls)).toBe(false);
    expect(events.find((e) => e.data?.choices?.[0]?.finish_reason)!.data.choices[0].finish_reason).toBe("stop");
  });

  test("to a model that cannot honour it: 400, not a silent loss", async () => {
    const response = await gateway.json("/v1/chat/completions", { model: "amazon.titan-text-express-v1", messages: [{ role: "user", content: "x" }], response_format: format });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toContain("response_format");
  });
});

describe("count_tokens", () => {
  const body = { model: "claude-sonnet-4-5", system: "Be brief.", messages: [{ role: "user", content: "Hello, Claude" }], tools: RICH.tools.slice(0, 1) };

  test("Bedrock Claude: Bedrock's CountTokens on the foundation model", async () => {
    const response = await messages(body, { "anthropic-beta": "interleaved-thinking-2025-05-14" }, "/v1/messages/count_tokens");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-parley-token-count")).toBeNull();
    const received = gateway.bedrock.last();
    expect(received.action).toBe("count-tokens");
    expect(received.modelId).toBe("anthropic.claude-sonnet-4-5-20250929-v1:0");
    const invoke = JSON.parse(received.body.input.invokeModel.body);
    expect(invoke).toEqual({ anthropic_version: "bedrock-2023-05-31", anthropic_beta: ["interleaved-thinking-2025-05-14"], max_tokens: 1, system: "Be brief.", messages: body.messages, tools: body.tools });
    expect(await response.json()).toEqual({ input_tokens: 7 + (received.body.input.invokeModel.body.length % 100) });
  });

  test("CountTokens failing: a tokenizer estimate, marked", async () => {
    gateway.bedrock.next({ kind: "error", status: 400, type: "ValidationException", message: "The provided model doesn't support counting tokens." });
    const response = await messages(body, {}, "/v1/messages/count_tokens");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-parley-token-count")).toBe("estimate");
    const { input_tokens } = await response.json();
    expect(input_tokens).toBeGreaterThan(10);
    expect(input_tokens).toBeLessThan(200);
  });

  test("OpenAI models: the estimate; more text, more tokens", async () => {
    const short = await (await messages({ model: "gpt-4o", messages: [{ role: "user", content: "Hello" }] }, {}, "/v1/messages/count_tokens")).json();
    const response = await messages({ model: "gpt-4o", messages: [{ role: "user", content: "Hello ".repeat(100) }] }, {}, "/v1/messages/count_tokens");
    expect(response.headers.get("x-parley-token-count")).toBe("estimate");
    const long = await response.json();
    expect(long.input_tokens - short.input_tokens).toBeGreaterThanOrEqual(90);
    expect(gateway.openai.received.length).toBe(0);
  });

  test("an unknown model: 404 in Anthropic's envelope", async () => {
    const response = await messages({ model: "nonexistent-model", messages: [{ role: "user", content: "x" }] }, {}, "/v1/messages/count_tokens");
    expect(response.status).toBe(404);
    expect((await response.json()).error.type).toBe("not_found_error");
  });
});

describe("models, root, errors", () => {
  test("GET /v1/models with anthropic-version: Anthropic's list and its cursors", async () => {
    const first = await (await gateway.call("/v1/models?limit=2", { headers: ANTHROPIC })).json();
    expect(first.data.length).toBe(2);
    expect(first.data[0]).toEqual({ type: "model", id: "claude-opus-4-6", display_name: "Claude Opus 4.6", created_at: "2026-02-05T00:00:00Z", lifecycle: "active" });
    expect(first.has_more).toBe(true);
    expect(first.first_id).toBe("claude-opus-4-6");
    const next = await (await gateway.call(`/v1/models?limit=2&after_id=${first.last_id}`, { headers: ANTHROPIC })).json();
    expect(next.first_id).toBe("claude-opus-4-5-20251101");
    const back = await (await gateway.call(`/v1/models?limit=5&before_id=${next.first_id}`, { headers: ANTHROPIC })).json();
    expect(back.data.map((m: { id: string }) => m.id)).toEqual(first.data.map((m: { id: string }) => m.id));
    expect(back.has_more).toBe(false);
  });

  test("GET /v1/models without it: OpenAI's list, Claude names included", async () => {
    const list = await (await gateway.call("/v1/models")).json();
    expect(list.object).toBe("list");
    expect(list.data.find((m: { id: string }) => m.id === "claude-sonnet-4-5-20250929")).toEqual({ id: "claude-sonnet-4-5-20250929", object: "model", created: 1759104000, owned_by: "anthropic", provider: "beta" });
  });

  test("GET /v1/models/{id} in both shapes; unknown ids 404 in the caller's dialect", async () => {
    expect(await (await gateway.call("/v1/models/claude-haiku-4-5-20251001", { headers: ANTHROPIC })).json()).toEqual({ type: "model", id: "claude-haiku-4-5-20251001", display_name: "Claude Haiku 4.5", created_at: "2025-10-15T00:00:00Z", lifecycle: "active" });
    expect((await (await gateway.call("/v1/models/gpt-4o")).json()).object).toBe("model");
    expect((await (await gateway.call("/v1/models/mock/tools")).json()).id).toBe("mock/tools");
    expect((await (await gateway.call("/v1/models/us.anthropic.claude-x-v1:0")).json()).id).toBe("us.anthropic.claude-x-v1:0");
    const missing = await gateway.call("/v1/models/no-such-model", { headers: ANTHROPIC });
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.type).toBe("not_found_error");
    const openai = await gateway.call("/v1/models/no-such-model");
    expect((await openai.json()).error.type).toBe("not_found_error");
  });

  test("HEAD / and GET / answer 200 without a key", async () => {
    expect((await gateway.call("/", { method: "HEAD", key: null })).status).toBe(200);
    const root = await gateway.call("/", { key: null });
    expect(root.status).toBe(200);
    expect((await root.json()).name).toBe("parley");
  });

  test("a wrong key, x-api-key or Bearer, ?beta=true or not: Anthropic's 401", async () => {
    for (const path of ["/v1/messages", "/v1/messages?beta=true"]) {
      const response = await gateway.json(path, { model: "mock", max_tokens: 5, messages: [{ role: "user", content: "x" }] }, { key: null, headers: { "x-api-key": "sk-wrong" } });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ type: "error", error: { type: "authentication_error", message: "Invalid API key." } });
    }
    const ok = await gateway.json("/v1/messages?beta=true", { model: "mock", max_tokens: 5, messages: [{ role: "user", content: "x" }] }, { key: null, headers: { "x-api-key": "sk-test-0123456789abcdef" } });
    expect(ok.status).toBe(200);
  });

  test("max_tokens missing: 400 as Anthropic says it", async () => {
    const response = await messages({ model: "mock", messages: [{ role: "user", content: "x" }] });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ type: "error", error: { type: "invalid_request_error", message: "max_tokens: Field required" } });
  });
});
