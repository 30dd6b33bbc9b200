import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { GatewayError } from "../../src/errors.ts";
import type { ChatRequest, Part, StreamEvent } from "../../src/ir.ts";
import type { Upstream } from "../../src/providers/kind.ts";
import { geminiKind } from "../../src/providers/gemini/kind.ts";
import type { createGeminiProvider } from "../../src/providers/gemini/provider.ts";
import type { GeminiSettings } from "../../src/providers/gemini/settings.ts";
import { countOf, FAKE_GEMINI_KEY, FAKE_GEMINI_MODELS, reply, startFakeGemini } from "../lib/fake-gemini.ts";

/** Contract 23: the gemini kind against a fake Gemini API, its provider called directly. */
const fake = await startFakeGemini();
afterAll(() => fake.stop());
beforeEach(() => fake.reset());

const upstreamOf = (table: Record<string, unknown>): Upstream<GeminiSettings> => ({
  name: "gem", kind: "gemini" as never, settings: geminiKind.settings(table), discover: true, timeoutMs: 5000, retries: 0, headers: {}, origin: {},
});
const upstream = upstreamOf({ api_key: FAKE_GEMINI_KEY, base_url: `${fake.url}/v1beta` });
const provider = (await geminiKind.build(upstream)) as ReturnType<typeof createGeminiProvider>;
const signal = new AbortController().signal;

const ask = (messages: ChatRequest["messages"], extra: Partial<ChatRequest> = {}): ChatRequest => ({
  system: [], messages, stream: false, includeUsage: true, fileIds: [], ...extra,
});
const hi = ask([{ role: "user", content: [{ type: "text", text: "Hi" }] }], { system: ["Be brief."], maxTokens: 100, temperature: 0.5 });
const collect = async (events: AsyncIterable<StreamEvent>) => {
  const all: StreamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
};
const TOOLS = [{ name: "get_weather", description: "The weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];

describe("chat through the IR", () => {
  test("a whole reply: the body Gemini takes, the key in x-goog-api-key, usage with the cache read", async () => {
    const answer = await provider.complete(hi, "gemini-2.5-flash", signal);
    expect(answer.content).toEqual([{ type: "text", text: "Hello from Gemini" }]);
    expect(answer.finish).toEqual({ reason: "stop", raw: "STOP" });
    // 120 prompt tokens, 100 of them from the cache; 7 answered and 5 thought.
    expect(answer.usage).toEqual({ input: { total: 120, cacheRead: 100, cacheWrite: 0 }, output: 12 });
    const sent = fake.last();
    expect(sent.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(sent.headers.get("x-goog-api-key")).toBe(FAKE_GEMINI_KEY);
    expect(sent.body).toEqual({
      contents: [{ role: "user", parts: [{ text: "Hi" }] }],
      systemInstruction: { parts: [{ text: "Be brief." }] },
      generationConfig: { maxOutputTokens: 100, temperature: 0.5 },
    });
  });

  test("a stream: text as it comes, the finish and the usage of the last chunk", async () => {
    const events = await collect(provider.stream({ ...hi, stream: true }, "models/gemini-2.5-flash", signal));
    expect(fake.last()).toMatchObject({ path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent", search: "?alt=sse" });
    expect(events.filter((e) => e.type === "text").map((e) => (e as { text: string }).text).join("")).toBe("Hello from Gemini");
    expect(events.find((e) => e.type === "finish")).toEqual({ type: "finish", finish: { reason: "stop", raw: "STOP" } });
    expect(events.filter((e) => e.type === "usage").at(-1)).toEqual({ type: "usage", usage: { input: { total: 120, cacheRead: 100, cacheWrite: 0 }, output: 12 } });
  });

  test("a stream that ends without a finish reason was cut short", async () => {
    fake.next({ kind: "stream", chunks: [{ candidates: [{ content: { role: "model", parts: [{ text: "Hel" }] }, index: 0 }] }] });
    const failed = await collect(provider.stream({ ...hi, stream: true }, "gemini-2.5-flash", signal)).catch((error) => error);
    expect(failed).toBeInstanceOf(GatewayError);
    expect(failed.message).toContain("ended before the reply was complete");
    fake.next({ kind: "stream", chunks: [{ candidates: [{ content: { role: "model", parts: [{ text: "Hel" }] }, index: 0 }] }, {}], breakAfter: 1 });
    const broken = await collect(provider.stream({ ...hi, stream: true }, "gemini-2.5-flash", signal)).catch((error) => error);
    expect(broken).toBeInstanceOf(GatewayError);
    expect(broken.status).toBe(503);
  });

  test("JSON answers: responseMimeType and the schema as JSON Schema", async () => {
    const schema = { type: "object", properties: { answer: { type: "string" } } };
    await provider.complete({ ...hi, responseFormat: { type: "json_schema", name: "a", schema } }, "gemini-2.5-flash", signal);
    expect(fake.last().body.generationConfig).toMatchObject({ responseMimeType: "application/json", responseJsonSchema: schema });
  });
});

describe("tool calls and thoughtSignature over two turns", () => {
  const weather = (args = { city: "Paris" }) => reply([{ functionCall: { name: "get_weather", args } }], "STOP", "gemini-3-pro-preview");

  test("a client with no place for the signature (Chat Completions): parley keeps it against the call id", async () => {
    fake.next({ kind: "json", body: weather() });
    const first = await provider.complete(ask([{ role: "user", content: [{ type: "text", text: "Weather in Paris?" }] }], { tools: TOOLS }), "gemini-3-pro-preview", signal);
    expect(fake.last().body.tools).toEqual([{ functionDeclarations: [{ name: "get_weather", description: "The weather in a city", parametersJsonSchema: TOOLS[0]!.parameters }] }]);
    expect(first.finish).toEqual({ reason: "tool_calls", raw: "STOP" });
    const call = first.content.find((p) => p.type === "tool_call")!;
    expect(call).toMatchObject({ type: "tool_call", name: "get_weather", arguments: '{"city":"Paris"}' });
    const given = fake.signatures.get('get_weather:{"city":"Paris"}');
    expect(given).toBeString();

    // What an OpenAI client sends back: the call (its id, name and arguments) and its result, nothing else.
    const history: ChatRequest["messages"] = [
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
      { role: "assistant", content: [call] },
      { role: "user", content: [{ type: "tool_result", toolCallId: (call as { id: string }).id, content: "18°C, sunny" }] },
    ];
    const second = await provider.complete(ask(history, { tools: TOOLS }), "gemini-3-pro-preview", signal);
    expect(second.content).toEqual([{ type: "text", text: "Hello from Gemini" }]);
    const contents = fake.last().body.contents;
    // The id parley made up for the call is not Gemini's: it is not sent; the response names the function.
    expect(contents[1]).toEqual({ role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: given }] });
    expect(contents[2]).toEqual({ role: "user", parts: [{ functionResponse: { name: "get_weather", response: { output: "18°C, sunny" } } }] });
  });

  test("a client that keeps reasoning (Anthropic's thinking blocks): the signature travels in the IR", async () => {
    fake.next({ kind: "stream", chunks: [weather({ city: "Oslo" })] });
    const events = await collect(provider.stream(ask([{ role: "user", content: [{ type: "text", text: "Oslo?" }] }], { tools: TOOLS, stream: true }), "gemini-3-pro-preview", signal));
    const given = fake.signatures.get('get_weather:{"city":"Oslo"}')!;
    expect(events.find((e) => e.type === "reasoning")).toEqual({ type: "reasoning", text: "", signature: `gemini:${given}` });
    const started = events.find((e) => e.type === "tool_call") as Extract<StreamEvent, { type: "tool_call" }>;
    // The client sends the turn back with its thinking block first, under an id of its own making.
    const turn: Part[] = [{ type: "reasoning", text: "", signature: `gemini:${given}` }, { type: "tool_call", id: "toolu_client_1", name: started.name, arguments: '{"city":"Oslo"}' }];
    await provider.complete(ask([
      { role: "user", content: [{ type: "text", text: "Oslo?" }] },
      { role: "assistant", content: turn },
      { role: "user", content: [{ type: "tool_result", toolCallId: "toolu_client_1", content: "5°C" }] },
    ], { tools: TOOLS }), "gemini-3-pro-preview", signal);
    expect(fake.last().body.contents[1].parts[0]).toEqual({ functionCall: { id: "toolu_client_1", name: "get_weather", args: { city: "Oslo" } }, thoughtSignature: given });
  });

  test("a call Gemini signed, sent back without its signature, is refused with a 400 that is not retried", async () => {
    fake.next({ kind: "json", body: weather({ city: "Rome" }) });
    await provider.complete(ask([{ role: "user", content: [{ type: "text", text: "Rome?" }] }], { tools: TOOLS }), "gemini-3-pro-preview", signal);
    // A history parley never saw (another gateway's), to a model that does not get the skip value.
    const history: ChatRequest["messages"] = [
      { role: "user", content: [{ type: "text", text: "Rome?" }] },
      { role: "assistant", content: [{ type: "tool_call", id: "call_elsewhere", name: "get_weather", arguments: '{"city":"Rome"}' }] },
      { role: "user", content: [{ type: "tool_result", toolCallId: "call_elsewhere", content: "20°C" }] },
    ];
    const refused = await provider.complete(ask(history, { tools: TOOLS }), "gemini-2.5-flash", signal).catch((error) => error);
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({ status: 400, retryable: false });
    expect(refused.upstream).toContain("thought_signature");
    // Gemini 3 and later get Google's documented skip value for a call whose signature nobody kept.
    await provider.complete(ask(history, { tools: TOOLS }), "gemini-3-pro-preview", signal);
    expect(fake.last().body.contents[1].parts[0].thoughtSignature).toBe("skip_thought_signature_validator");
  });
});

describe("counts, embeddings, models", () => {
  test("countTokens: the request in generateContentRequest, with its model", async () => {
    const tokens = await provider.gemini.count(hi, "gemini-2.5-flash", signal);
    const sent = fake.last();
    expect(sent.path).toBe("/v1beta/models/gemini-2.5-flash:countTokens");
    expect(sent.body.generateContentRequest).toMatchObject({ model: "models/gemini-2.5-flash", contents: [{ role: "user", parts: [{ text: "Hi" }] }] });
    expect(tokens).toBe(countOf(sent.raw));
  });

  test("an Anthropic client's count_tokens body, counted by Gemini", async () => {
    const body = JSON.stringify({ model: "gemini-2.5-flash", messages: [{ role: "user", content: "Hello there" }] });
    const tokens = await provider.countTokens!["anthropic-messages"]!({ body, model: "gemini-2.5-flash", requested: "gemini-2.5-flash", stream: false, signal });
    expect(fake.last().body.generateContentRequest.contents).toEqual([{ role: "user", parts: [{ text: "Hello there" }] }]);
    expect(tokens).toBe(countOf(fake.last().raw));
  });

  test("embeddings through batchEmbedContents, one request per text", async () => {
    const result = await provider.embed!({ texts: ["alpha", "beta"], tokens: false, dimensions: 3, inputType: "search_query" }, "gemini-embedding-001", signal);
    expect(result.vectors).toHaveLength(2);
    expect(result.vectors.every((v) => v.length === 3)).toBe(true);
    const sent = fake.last();
    expect(sent.path).toBe("/v1beta/models/gemini-embedding-001:batchEmbedContents");
    expect(sent.body.requests[1]).toEqual({ model: "models/gemini-embedding-001", content: { parts: [{ text: "beta" }] }, taskType: "RETRIEVAL_QUERY", outputDimensionality: 3 });
  });

  test("models: every page of GET /v1beta/models, without the models/ prefix", async () => {
    fake.models.calls = 0;
    const listed = await geminiKind.list!(upstream);
    expect(listed.map((m) => m.id)).toEqual(FAKE_GEMINI_MODELS);
    expect(fake.models.calls).toBe(3);
    expect(listed[0]).toEqual({ id: "gemini-2.5-pro", owned_by: "google", created: 0 });
  });
});

describe("errors", () => {
  test("429 RESOURCE_EXHAUSTED is retryable, after Google's RetryInfo delay", async () => {
    fake.rateLimited();
    const error = await provider.complete(hi, "gemini-2.5-flash", signal).catch((e) => e);
    expect(error).toMatchObject({ status: 429, type: "rate_limit_error", retryable: true, retryAfter: 7 });
  });

  test("400 INVALID_ARGUMENT keeps its status and is not retried; 503 is retried", async () => {
    fake.next({ kind: "error", status: 400, message: "* GenerateContentRequest.contents: contents is not specified" });
    expect(await provider.complete(hi, "gemini-2.5-flash", signal).catch((e) => e)).toMatchObject({ status: 400, type: "invalid_request_error", retryable: false });
    fake.next({ kind: "error", status: 503, message: "The model is overloaded. Please try again later." });
    expect(await provider.complete(hi, "gemini-2.5-flash", signal).catch((e) => e)).toMatchObject({ status: 503, retryable: true });
  });

  test("a prompt over the context is the overflow clients compact on", async () => {
    fake.next({ kind: "error", status: 400, message: "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576)." });
    const error = await provider.complete(hi, "gemini-2.5-flash", signal).catch((e) => e);
    expect(error).toMatchObject({ status: 400, overflow: { tokens: 1048577, limit: 1048576 } });
  });

  test("a key Gemini does not take (its 400 API_KEY_INVALID) is parley's credentials: 502, naming the setting", async () => {
    const bad = (await geminiKind.build(upstreamOf({ api_key: "AIzaWrong", base_url: fake.url }))) as ReturnType<typeof createGeminiProvider>;
    const error = await bad.complete(hi, "gemini-2.5-flash", signal).catch((e) => e);
    expect(error).toMatchObject({ status: 502, retryable: false });
    expect(error.message).toContain("api_key in [upstreams.gem]");
    expect(JSON.stringify(error)).not.toContain("AIzaWrong");
  });
});

describe("a Gemini client's own body (the native path)", () => {
  test("goes up as sent; the reply comes back as Gemini wrote it, its usage read", async () => {
    const body = `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]}`;
    const answer = await provider.gemini.generate({ body, model: "gemini-2.5-pro", requested: "gemini-2.5-pro", stream: false, signal });
    expect(fake.last().raw).toBe(body);
    expect(answer.kind).toBe("json");
    if (answer.kind !== "json") return;
    expect(JSON.parse(answer.body as string)).toEqual(reply(undefined, "STOP", "gemini-2.5-pro"));
    expect(answer.usage).toEqual({ input: { total: 120, cacheRead: 100, cacheWrite: 0 }, output: 12 });
  });

  test("a stream's bytes as Gemini sent them", async () => {
    const answer = await provider.gemini.generate({ body: `{"contents":[]}`, model: "gemini-2.5-flash", requested: "gemini-2.5-flash", stream: true, signal });
    expect(answer.kind).toBe("stream");
    if (answer.kind !== "stream") return;
    let text = "";
    for await (const bytes of answer.body as AsyncIterable<Uint8Array>) text += new TextDecoder().decode(bytes);
    expect(text.split("\r\n\r\n").filter(Boolean)).toHaveLength(3);
    expect(text).toContain('"finishReason":"STOP"');
  });

  test("a 4xx keeps Gemini's words; countTokens counts the body as sent", async () => {
    fake.next({ kind: "error", status: 400, message: "Invalid value at 'contents[0].role'" });
    const error = await provider.gemini.generate({ body: "{}", model: "gemini-2.5-flash", requested: "gemini-2.5-flash", stream: false, signal }).catch((e) => e);
    expect(error).toMatchObject({ status: 400, message: "Invalid value at 'contents[0].role'" });
    const raw = `{"contents":[{"parts":[{"text":"count me"}]}]}`;
    expect(await provider.gemini.countNative({ body: raw, model: "gemini-2.5-flash", requested: "gemini-2.5-flash", stream: false, signal })).toBe(countOf(raw));
  });
});
