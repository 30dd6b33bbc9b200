import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { GatewayError } from "../../src/errors.ts";
import { responses } from "../../src/wire/responses/codec.ts";
import { guardStream, openChunks } from "../../src/lib/sse.ts";
import { anthropicEvents, anthropicReply, converseEvents } from "../lib/fake-bedrock.ts";
import { readSse, startGateway, TEST_KEY } from "../lib/gateway.ts";

const gateway = await startGateway();
const client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gateway.listen()}/v1`, maxRetries: 0 });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const GPT = "gpt-4.1";
const CLAUDE = "anthropic.claude-3-5-sonnet-20241022-v2:0";
const CONVERSE = "meta.llama3-70b-instruct-v1:0";
const WEATHER = { type: "function" as const, name: "get_weather", description: "Weather for a city", strict: false, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };
const post = (body: object) => gateway.json("/v1/responses", body);

describe("passthrough to an OpenAI-compatible upstream", () => {
  test("responses.create: the body goes up as sent and the reply comes back byte for byte", async () => {
    const body = { model: GPT, input: "hi", store: false, include: ["reasoning.encrypted_content"], tools: [{ type: "web_search" }], some_future_field: { x: 1 } };
    const response = await post(body);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(gateway.openai.sent[0]!);
    expect(response.headers.get("x-parley-dropped-tools")).toBeNull();
    expect(gateway.openai.last().path).toBe("/v1/responses");
    expect(gateway.openai.last().raw).toBe(JSON.stringify(body));
    expect(gateway.openai.last().headers.get("authorization")).toBe("Bearer sk-upstream-openai-key");

    const sdk = await client.responses.create({ model: GPT, input: "hi" });
    expect(sdk.output_text).toBe("Hello from OpenAI");
    expect(sdk.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
  });

  test("responses.stream: the upstream's events arrive untouched and complete", async () => {
    const response = await post({ model: GPT, input: "hi", stream: true });
    expect(response.headers.get("content-type")).toStartWith("text/event-stream");
    expect(await response.text()).toBe(gateway.openai.sent[0]!);

    gateway.openai.next({ kind: "stream", chunks: ["Hel", "lo"] });
    const stream = client.responses.stream({ model: GPT, input: "hi" });
    const deltas: string[] = [];
    stream.on("response.output_text.delta", (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    expect(deltas).toEqual(["Hel", "lo"]);
    expect(final.output_text).toBe("Hello");
  });

  test("previous_response_id is forwarded: OpenAI keeps the state", async () => {
    const response = await post({ model: GPT, input: "and then?", previous_response_id: "resp_abc" });
    expect(response.status).toBe(200);
    expect(gateway.openai.last().body.previous_response_id).toBe("resp_abc");
  });

  test("a stream that breaks ends with OpenAI's error event, which the SDK raises", async () => {
    gateway.openai.next({ kind: "stream", breakAfter: 4, gapMs: 20 });
    const events = await readSse(await post({ model: GPT, input: "hi", stream: true }));
    expect(events.at(-1)!.event).toBe("error");
    expect(events.at(-1)!.data).toMatchObject({ type: "error", code: "server_error", message: expect.stringContaining("dropped the connection") });

    gateway.openai.next({ kind: "stream", endAfter: 5 });
    await expect(client.responses.stream({ model: GPT, input: "hi" }).finalResponse()).rejects.toThrow(/ended before the reply was complete/);
  });

  test("a stream the upstream ends with its own error event is not extended", async () => {
    gateway.openai.next({ kind: "stream", errorAfter: 3 });
    const events = await readSse(await post({ model: GPT, input: "hi", stream: true }));
    expect(events.filter((e) => e.event === "error")).toHaveLength(1);
    expect(events.at(-1)!.data.code).toBe("server_error");
  });

  test("a large final event is recognised as the end: the check reads the last event's name", async () => {
    gateway.openai.next({ kind: "stream", chunks: Array.from({ length: 300 }, (_, i) => `word${i} `) });
    const events = await readSse(await post({ model: GPT, input: "hi", stream: true }));
    expect(events.at(-1)!.event).toBe("response.completed");
    expect(events.filter((e) => e.event === "error")).toHaveLength(0);
  });

  test("an upstream reply that is not a response object is a 503 in OpenAI's envelope", async () => {
    gateway.openai.next({ kind: "raw", body: JSON.stringify({ choices: [] }) });
    const response = await post({ model: GPT, input: "hi" });
    expect(response.status).toBe(503);
    expect((await response.json()).error).toMatchObject({ type: "server_error", code: null, message: expect.stringContaining("cannot read") });
  });

  test("upstream errors keep their status and message and reach the SDK typed", async () => {
    gateway.openai.next({ kind: "error", status: 400, message: "Invalid 'input': too long." });
    const error = await client.responses.create({ model: GPT, input: "hi" }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.message).toContain("Invalid 'input': too long.");
    expect(error.error).toMatchObject({ type: "invalid_request_error" });
  });
});

describe("converted: Bedrock Claude, Converse and the mock", () => {
  test.each([
    ["Claude (InvokeModel)", CLAUDE, "Hello from Claude", [13, 5]],
    ["Converse", CONVERSE, "Hello from Converse", [15, 6]],
    ["mock", "mock", "hi there", [5, 2]],
  ])("responses.create to %s", async (_, model, text, [input, output]) => {
    const reply = await client.responses.create({ model, input: "hi there", instructions: "Be brief.", max_output_tokens: 100, temperature: 0.5 });
    expect(reply.object).toBe("response");
    expect(reply.id).toStartWith("resp_");
    expect(reply.status).toBe("completed");
    expect(reply.model).toBe(model);
    expect(reply.output_text).toBe(text);
    expect(reply.usage).toMatchObject({ input_tokens: input, output_tokens: output, total_tokens: input! + output! });
  });

  test("instructions, developer messages (also mid-conversation: Bedrock takes them on top), max_output_tokens and temperature reach Bedrock", async () => {
    await post({
      model: CLAUDE, instructions: "Be brief.", max_output_tokens: 99, temperature: 0.3, top_p: 0.9,
      input: [
        { role: "developer", content: "Speak French." }, { role: "user", content: [{ type: "input_text", text: "hi" }] },
        { role: "developer", content: "Sign with a name." }, { role: "user", content: "go on" },
      ],
    });
    const sent = gateway.bedrock.last().body;
    expect(sent.system).toBe("Be brief.\n\nSpeak French.\n\nSign with a name.");
    expect(sent).toMatchObject({
      max_tokens: 99, temperature: 0.3, top_p: 0.9,
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }, { type: "text", text: "go on" }] }],
    });
  });

  test("images go up inline; earlier assistant output_text and reasoning items are history", async () => {
    await post({
      model: CLAUDE,
      input: [
        { role: "user", content: [{ type: "input_text", text: "what is it?" }, { type: "input_image", detail: "auto", image_url: "data:image/png;base64,iVBORw0KGgo=" }] },
        { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAA..." },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "A dot.", annotations: [] }] },
        { role: "user", content: "sure?" },
      ],
    });
    expect(gateway.bedrock.last().body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "what is it?" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }] },
      { role: "assistant", content: [{ type: "text", text: "A dot." }] },
      { role: "user", content: [{ type: "text", text: "sure?" }] },
    ]);
  });

  test("a function tool round trip: function_call, then function_call_output", async () => {
    gateway.bedrock.next({ kind: "json", body: anthropicReply([{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }], "tool_use") });
    const first = await client.responses.create({ model: CLAUDE, input: "weather in Paris?", tools: [WEATHER], tool_choice: "auto" });
    const call = first.output.find((item) => item.type === "function_call")!;
    expect(call).toMatchObject({ type: "function_call", call_id: "toolu_1", name: "get_weather", arguments: '{"city":"Paris"}', status: "completed" });
    expect(gateway.bedrock.last().body.tools).toEqual([{ name: "get_weather", description: "Weather for a city", input_schema: WEATHER.parameters }]);
    expect(gateway.bedrock.last().body.tool_choice).toEqual({ type: "auto" });

    const second = await client.responses.create({
      model: CLAUDE,
      tools: [WEATHER],
      input: [{ role: "user", content: "weather in Paris?" }, call, { type: "function_call_output", call_id: "toolu_1", output: "18C, sunny" }],
    });
    expect(second.output_text).toBe("Hello from Claude");
    expect(gateway.bedrock.last().body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "weather in Paris?" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18C, sunny" }] },
    ]);
  });

  test("tool_choice naming a function forces it", async () => {
    await post({ model: CLAUDE, input: "hi", tools: [WEATHER], tool_choice: { type: "function", name: "get_weather" } });
    expect(gateway.bedrock.last().body.tool_choice).toEqual({ type: "tool", name: "get_weather" });
  });

  test("tools the upstream cannot run are dropped and named in x-parley-dropped-tools", async () => {
    const tools = [{ type: "web_search" }, WEATHER, { type: "custom", name: "apply_patch" }, { type: "namespace", name: "mcp", description: "", tools: [] }, { type: "web_search" }];
    const response = await post({ model: CLAUDE, input: "hi", tools });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-parley-dropped-tools")).toBe("web_search, custom, namespace");
    expect(gateway.bedrock.last().body.tools.map((t: { name: string }) => t.name)).toEqual(["get_weather"]);

    const hostedOnly = await post({ model: CLAUDE, input: "hi", tools: [{ type: "web_search" }], tool_choice: "required" });
    expect(hostedOnly.headers.get("x-parley-dropped-tools")).toBe("web_search");
    expect(gateway.bedrock.last().body).not.toContainKey("tools");
    expect(gateway.bedrock.last().body).not.toContainKey("tool_choice");

    const streamed = await post({ model: CLAUDE, input: "hi", tools, stream: true });
    expect(streamed.headers.get("x-parley-dropped-tools")).toBe("web_search, custom, namespace");
    await streamed.text();
  });

  test("previous_response_id on a converted route: 400 saying to send the full input, nothing sent upstream", async () => {
    const error = await client.responses.create({ model: CLAUDE, input: "and then?", previous_response_id: "resp_abc" }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error).toMatchObject({ type: "invalid_request_error", param: "previous_response_id", code: null });
    expect(error.message).toContain("send the whole conversation in 'input'");
    expect(gateway.bedrock.received).toHaveLength(0);
  });

  test("responses.stream: the Responses grammar with sequence numbers, ending in response.completed", async () => {
    const response = await post({ model: CLAUDE, input: "hi", stream: true });
    const events = await readSse(response);
    expect(events.map((e) => e.event)).toEqual([
      "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
      "response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
      "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed",
    ]);
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.every((e) => e.data.type === e.event)).toBe(true);
    expect(events.at(-1)!.data.response).toMatchObject({ status: "completed", usage: { input_tokens: 13, output_tokens: 5, total_tokens: 18 } });

    const stream = client.responses.stream({ model: CLAUDE, input: "hi" });
    const deltas: string[] = [];
    stream.on("response.output_text.delta", (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    expect(deltas).toEqual(["Hello", " from", " Claude"]);
    expect(final.output_text).toBe("Hello from Claude");
  });

  test("a streamed function call: arguments in deltas, the SDK assembles the item", async () => {
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(["Checking."], { id: "toolu_2", name: "get_weather", json: ['{"city"', ':"Oslo"}'] }) });
    const stream = client.responses.stream({ model: CLAUDE, input: "weather in Oslo?", tools: [WEATHER] });
    const deltas: string[] = [];
    stream.on("response.function_call_arguments.delta", (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    expect(deltas).toEqual(['{"city"', ':"Oslo"}']);
    expect(final.output_text).toBe("Checking.");
    expect(final.output[1]).toMatchObject({ type: "function_call", call_id: "toolu_2", name: "get_weather", arguments: '{"city":"Oslo"}' });
  });

  test("the mock answers a streamed tool call for mock/tools", async () => {
    const final = await client.responses.stream({ model: "mock/tools", input: "Oslo", tools: [WEATHER] }).finalResponse();
    expect(final.output[0]).toMatchObject({ type: "function_call", name: "get_weather", arguments: '{"city":"mock/tools: Oslo"}' });
  });

  test("a max_tokens stop is an incomplete response", async () => {
    gateway.bedrock.next({ kind: "json", body: anthropicReply(undefined, "max_tokens") });
    const reply = await client.responses.create({ model: CLAUDE, input: "hi", max_output_tokens: 5 });
    expect(reply.status).toBe("incomplete");
    expect(reply.incomplete_details).toEqual({ reason: "max_output_tokens" });
    const events = converseEvents().map((e) => (e.messageStop ? { messageStop: { stopReason: "max_tokens" } } : e));
    gateway.bedrock.next({ kind: "stream", events });
    const streamed = await readSse(await post({ model: CONVERSE, input: "hi", stream: true }));
    expect(streamed.at(-1)!.event).toBe("response.incomplete");
    expect(streamed.at(-1)!.data.response.incomplete_details).toEqual({ reason: "max_output_tokens" });
  });

  test("a stream that breaks after it started ends with response.failed", async () => {
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(), exceptionAfter: 3 });
    const events = await readSse(await post({ model: CLAUDE, input: "hi", stream: true }));
    const last = events.at(-1)!;
    expect(last.event).toBe("response.failed");
    expect(last.data.response).toMatchObject({ id: events[0]!.data.response.id, status: "failed", error: { code: "server_error" } });
    expect(last.data.sequence_number).toBe(events.length - 1);
    expect(events.filter((e) => e.event === "response.output_item.added")).toHaveLength(events.filter((e) => e.event === "response.output_item.done").length);
  });
});

describe("errors in OpenAI's envelope", () => {
  test("a bad body: 400/422 with message, type, param and code", async () => {
    const missing = await post({ model: CLAUDE });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: { message: expect.stringContaining("'input'"), type: "invalid_request_error", param: "input", code: null } });
    const wrong = await post({ model: CLAUDE, input: [{ role: "user", content: [{ type: "input_audio" }] }] });
    expect(wrong.status).toBe(422);
    expect((await wrong.json()).error).toMatchObject({ type: "invalid_request_error", param: "input[0].content[0].type" });
    const notJson = await gateway.call("/v1/responses", { method: "POST", body: "{", headers: { "content-type": "application/json" } });
    expect(notJson.status).toBe(400);
  });

  test("a wrong key is a 401 the SDK raises as AuthenticationError", async () => {
    const other = new OpenAI({ apiKey: "sk-wrong", baseURL: `${gateway.listen()}/v1`, maxRetries: 0 });
    const error = await other.responses.create({ model: "mock", input: "hi" }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error.error).toMatchObject({ type: "invalid_request_error", code: "invalid_api_key" });
  });

  test("an unknown model is a 404; an upstream 429 keeps its Retry-After", async () => {
    const unknown = await post({ model: "no-such-model", input: "hi" });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.type).toBe("invalid_request_error");
    const limited = await post({ model: "mock/error-429", input: "hi" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBeTruthy();
    expect((await limited.json()).error).toMatchObject({ type: "requests", code: "rate_limit_exceeded" });
  });
});

describe("the passthrough's end check", () => {
  const complete = [
    'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","output":[]}}\n\n',
    'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":1,"delta":"event: response.completed"}\n\n',
    `event: response.completed\ndata: {"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","output":[{"text":"${"x".repeat(500)}"}]}}\n\n`,
  ].join("");
  const guarded = async (text: string, cuts: number[]) => {
    const bytes = new TextEncoder().encode(text);
    const bounds = [0, ...cuts, bytes.length];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i + 1 < bounds.length; i++) controller.enqueue(bytes.slice(bounds[i], bounds[i + 1]));
        controller.close();
      },
    });
    const ending = { last: responses.lastEvent, names: responses.endEvents, error: (e: GatewayError) => responses.streamEncoder("m", {} as never).error(e) };
    const chunks = openChunks(body);
    const out = guardStream(chunks, await chunks.next(), ending, (e) => e as Error, () => new GatewayError(503, "service_unavailable_error", "cut short"), () => {});
    return new Response(out).text();
  };

  test("a complete stream passes whatever the chunk bounds, even split inside the event line", async () => {
    for (let cut = 1; cut < complete.length; cut += 7) expect(await guarded(complete, [cut])).toBe(complete);
    const at = complete.lastIndexOf("event: response.completed");
    expect(await guarded(complete, [at + 1, at + 9, at + 20])).toBe(complete);
  });

  test("a stream cut before its last event fails, even when a delta's text names it", async () => {
    const cut = complete.slice(0, complete.lastIndexOf("event: response.completed"));
    const text = await guarded(cut, [10]);
    expect(text.startsWith(cut)).toBe(true);
    expect(text.slice(cut.length)).toStartWith("event: error\n");
  });

  test("the usage of a passed-through stream is read from its response.completed event", async () => {
    const response = await post({ model: GPT, input: "hi", stream: true });
    const text = await response.text();
    expect(responses.usageIn!(text.slice(-3000))).toEqual({ input: { total: 11, cacheRead: 0, cacheWrite: 0 }, output: 7, model: GPT });
    expect(responses.usageIn!(complete)).toEqual(undefined);
  });
});
