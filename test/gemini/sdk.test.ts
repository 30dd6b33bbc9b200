/**
 * The official @google/genai SDK against parley's Gemini front door (contract 23): to a gemini
 * upstream the body goes as sent and the answer comes back as Gemini wrote it; to every other kind
 * (OpenAI, Anthropic, Bedrock, the mock) it is converted and answered in Gemini's shape; errors
 * reach the SDK as its typed ApiError with the right status.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { ApiError, GoogleGenAI, Type } from "@google/genai";
import { TEST_KEY } from "../lib/app.ts";
import { countOf } from "../lib/fake-gemini.ts";
import { startGoogleGateway } from "../lib/google-gateway.ts";
import { recordsOf } from "../usage/lib.ts";

const gateway = await startGoogleGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0" });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());
const base = gateway.listen();
const ai = new GoogleGenAI({ apiKey: TEST_KEY, httpOptions: { baseUrl: base } });
const v1 = new GoogleGenAI({ apiKey: TEST_KEY, httpOptions: { baseUrl: base, apiVersion: "v1" } });

const header = (r: { sdkHttpResponse?: { headers?: Record<string, string> } }, name: string) => r.sdkHttpResponse?.headers?.[name];

async function streamed(client: GoogleGenAI, model: string) {
  let text = "";
  let usage: unknown;
  for await (const chunk of await client.models.generateContentStream({ model, contents: "Hi" })) {
    text += chunk.text ?? "";
    usage = chunk.usageMetadata ?? usage;
  }
  return { text, usage };
}

async function apiError(call: () => Promise<unknown>): Promise<ApiError> {
  try {
    await call();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("no error");
}

describe("to a gemini upstream: passed through", () => {
  test("generateContent: the SDK's body reaches Gemini as sent, and Gemini's answer and usage come back", async () => {
    const reply = await ai.models.generateContent({ model: "gemini-2.5-flash", contents: "Hi", config: { temperature: 0.2 } });
    expect(reply.text).toBe("Hello from Gemini");
    expect(reply.usageMetadata?.cachedContentTokenCount).toBe(100);
    expect(header(reply, "x-parley-upstream")).toBe("gem");
    const sent = gateway.gemini.last();
    expect(sent.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(sent.body).toEqual({ contents: [{ parts: [{ text: "Hi" }], role: "user" }], generationConfig: { temperature: 0.2 } });
  });

  test("byte for byte: numbers, spacing and fields parley does not know reach Gemini unchanged", async () => {
    const raw = `{ "contents": [{"role":"user","parts":[{"text":"Hi \\u00e9"}]}], "generationConfig": {"seed": 12345678901234567890}, "futureField": {"x": 1.50} }`;
    const response = await fetch(`${base}/v1beta/models/gemini-2.5-pro:generateContent`, { method: "POST", headers: { "x-goog-api-key": TEST_KEY, "content-type": "application/json" }, body: raw });
    expect(response.status).toBe(200);
    expect(gateway.gemini.last().raw).toBe(raw);
  });

  test("streamGenerateContent: server-sent chunks as Gemini sent them, under v1beta and v1", async () => {
    for (const client of [ai, v1]) {
      const { text, usage } = await streamed(client, "gemini-2.5-flash");
      expect(text).toBe("Hello from Gemini");
      expect(usage).toMatchObject({ promptTokenCount: 120, cachedContentTokenCount: 100 });
      expect(gateway.gemini.last().search).toBe("?alt=sse");
    }
  });

  test("countTokens: Gemini's own count of the body as sent", async () => {
    const counted = await ai.models.countTokens({ model: "gemini-2.5-flash", contents: "How many tokens is this?" });
    expect(counted.totalTokens).toBe(countOf(gateway.gemini.last().raw));
    expect(header(counted, "x-parley-token-count")).toBeUndefined();
  });

  test("embedContent with several contents: Gemini's vectors in Gemini's shape", async () => {
    const result = await ai.models.embedContent({ model: "gemini-embedding-001", contents: ["one", "two"], config: { outputDimensionality: 3 } });
    expect(result.embeddings?.map((e) => e.values?.length)).toEqual([3, 3]);
    expect(gateway.gemini.last().method).toBe("batchEmbedContents");
  });

  test("a Gemini model falls over to Vertex when the Gemini API fails", async () => {
    gateway.gemini.next({ kind: "error", status: 503, message: "The model is overloaded." });
    const reply = await ai.models.generateContent({ model: "gemini-2.5-flash", contents: "Hi" });
    expect(reply.text).toBe("Hello from Gemini");
    expect(header(reply, "x-parley-upstream")).toBe("vtx");
    expect(gateway.vertex.gemini.last().path).toBe("/v1/projects/parley-test/locations/us-east5/publishers/google/models/gemini-2.5-flash:generateContent");
  });
});

describe("to every other kind: converted", () => {
  const OTHERS = [
    ["an OpenAI upstream", "gpt-4o", "Hello from OpenAI"],
    ["the Anthropic API", "claude-sonnet-4-5", "Hello from Anthropic"],
    ["Claude on Bedrock", "anthropic.claude-3-5-haiku-20241022-v1:0", "Hello from Claude"],
    ["the mock", "mock", "Hi"],
  ] as const;

  test.each(OTHERS)("%s answers generateContent and the stream in Gemini's shape", async (_name, model, text) => {
    const reply = await ai.models.generateContent({ model, contents: "Hi" });
    expect(reply.text).toBe(text);
    expect(reply.candidates?.[0]?.finishReason).toBe("STOP" as never);
    expect(reply.usageMetadata?.promptTokenCount).toBeGreaterThan(0);
    expect((await streamed(ai, model)).text).toBe(text);
    expect(gateway.gemini.received.length).toBe(0);
  });

  test("an OpenAI model's tool call comes back as a functionCall", async () => {
    gateway.openai.next({ kind: "reply", toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' }] });
    const reply = await ai.models.generateContent({
      model: "gpt-4o", contents: "Weather in Paris?",
      config: { tools: [{ functionDeclarations: [{ name: "get_weather", parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } } } }] }] },
    });
    expect(reply.functionCalls).toEqual([{ id: "call_1", name: "get_weather", args: { city: "Paris" } }]);
    expect(gateway.openai.last().body.tools[0].function.name).toBe("get_weather");
  });

  test("countTokens elsewhere: the tokenizer's estimate, marked", async () => {
    const counted = await ai.models.countTokens({ model: "gpt-4o", contents: "How many tokens is this?" });
    expect(counted.totalTokens).toBeGreaterThan(3);
    expect(header(counted, "x-parley-token-count")).toBe("estimate");
  });

  test("embeddings from an OpenAI upstream and the mock, in Gemini's shape", async () => {
    const openai = await ai.models.embedContent({ model: "text-embedding-3-small", contents: ["one", "two"] });
    expect(openai.embeddings?.length).toBe(2);
    expect(openai.embeddings?.[0]?.values?.every((v) => typeof v === "number")).toBe(true);
    expect(gateway.openai.last().body.input).toEqual(["one", "two"]);
    const mock = await ai.models.embedContent({ model: "mock", contents: "one", config: { outputDimensionality: 8 } });
    expect(mock.embeddings?.[0]?.values?.length).toBe(8);
  });
});

test("usage is recorded for the Gemini front door as for every chat endpoint, cache reads apart", async () => {
  await ai.models.generateContent({ model: "gemini-2.5-flash", contents: "Hi" });
  await streamed(ai, "gemini-2.5-flash");
  await ai.models.generateContent({ model: "gpt-4o", contents: "Hi" });
  const records = await recordsOf(gateway.config, () => gateway.call("/v1/usage"));
  // The SDK 3.x calls /v1.
  const mine = records.filter((r) => r.endpoint.startsWith("/v1/models/")).slice(-3);
  expect(mine.map((r) => [r.endpoint, r.model_requested, r.input_tokens, r.cache_read_tokens, r.output_tokens, r.outcome])).toEqual([
    // Gemini's promptTokenCount 120 with 100 read from its cache (recorded apart); candidates 7 and thoughts 5 are output.
    ["/v1/models/{model}:generateContent", "gemini-2.5-flash", 20, 100, 12, "ok"],
    ["/v1/models/{model}:streamGenerateContent", "gemini-2.5-flash", 20, 100, 12, "ok"],
    ["/v1/models/{model}:generateContent", "gpt-4o", 11, 0, 7, "ok"],
  ]);
});

describe("models and errors", () => {
  test("models.list and models.get in Gemini's shape", async () => {
    const names: string[] = [];
    for await (const model of await ai.models.list()) names.push(model.name ?? "");
    expect(names).toContain("models/gpt-4o");
    expect(names).toContain("models/mock");
    const one = await ai.models.get({ model: "gemini-2.5-pro" });
    expect(one.name).toBe("models/gemini-2.5-pro");
    expect(one.supportedActions).toContain("generateContent");
  });

  test("GET /v1/models answers in Gemini's shape to a Gemini key, OpenAI's otherwise", async () => {
    const gemini = await (await fetch(`${base}/v1/models?key=${TEST_KEY}`)).json();
    expect(gemini.models.length).toBeGreaterThan(0);
    const openai = await (await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).json();
    expect(openai.object).toBe("list");
  });

  test("an unknown model, a wrong key, a bad body, an upstream's rate limit: ApiError with Gemini's status", async () => {
    expect((await apiError(() => ai.models.generateContent({ model: "nope-1", contents: "Hi" }))).status).toBe(404);
    const wrong = new GoogleGenAI({ apiKey: "wrong-key", httpOptions: { baseUrl: base } });
    const refused = await apiError(() => wrong.models.generateContent({ model: "gemini-2.5-flash", contents: "Hi" }));
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.message).error.status).toBe("UNAUTHENTICATED");
    const bad = await fetch(`${base}/v1beta/models/gpt-4o:generateContent`, { method: "POST", headers: { "x-goog-api-key": TEST_KEY }, body: '{"contents":"no"}' });
    expect(bad.status).toBe(422);
    expect((await bad.json()).error).toMatchObject({ code: 422, status: "INVALID_ARGUMENT" });
    gateway.gemini.rateLimited(1);
    gateway.vertex.gemini.next({ kind: "error", status: 429, message: "Quota exceeded." });
    const limited = await apiError(() => ai.models.generateContent({ model: "gemini-2.5-flash", contents: "Hi" }));
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.message).error.status).toBe("RESOURCE_EXHAUSTED");
  });

  test("a stream without alt=sse is refused clearly, not answered in a framing the client did not ask for", async () => {
    const response = await fetch(`${base}/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=${TEST_KEY}`, { method: "POST", body: '{"contents":[]}' });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toContain("alt=sse");
  });
});
