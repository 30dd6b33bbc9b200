/**
 * What the Gemini front door writes, checked against the @google/genai SDK's own types
 * (test/schemas/gemini.json, from scripts/vendor-schemas.ts), as test/shapes checks the other
 * dialects: converted replies, every stream chunk, a stream that breaks, counts, embeddings, the
 * model list, and every error, also for paths no endpoint takes. A passthrough reply is Gemini's own
 * bytes: checked to arrive unaltered.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import gemini from "../schemas/gemini.json" with { type: "json" };
import { TEST_KEY } from "../lib/app.ts";
import { readSse } from "../lib/gateway.ts";
import { startGoogleGateway } from "../lib/google-gateway.ts";

const gateway = await startGoogleGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0" });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());
const base = gateway.listen();

const ajv = new Ajv2020({ strict: false, allErrors: true }).addSchema(gemini);
const ref = (name: string) => ({ $ref: `gemini.json#/definitions/${name}` });
const REPLY = ajv.compile({
  type: "object",
  properties: { candidates: { type: "array", items: ref("Candidate") }, usageMetadata: ref("GenerateContentResponseUsageMetadata"), promptFeedback: ref("GenerateContentResponsePromptFeedback"), modelVersion: { type: "string" }, responseId: { type: "string" }, createTime: { type: "string" } },
  additionalProperties: false,
});
/** Google's error envelope (google.rpc.Status in JSON): the SDK has no type for it. */
const ERROR = ajv.compile({
  type: "object", required: ["error"], additionalProperties: false,
  properties: { error: { type: "object", required: ["code", "message", "status"], properties: { code: { type: "integer" }, message: { type: "string" }, status: { type: "string", pattern: "^[A-Z_]+$" }, details: { type: "array" } }, additionalProperties: false } },
});
const COUNT = ajv.compile(ref("CountTokensResponse"));
const EMBEDDINGS = ajv.compile({ type: "object", properties: { embeddings: { type: "array", items: ref("ContentEmbedding") } }, required: ["embeddings"], additionalProperties: false });
const check = (validate: ReturnType<typeof ajv.compile>, body: unknown) => (validate(body) ? [] : validate.errors);

const headers = { "x-goog-api-key": TEST_KEY, "content-type": "application/json" };
const call = (model: string, method: string, body: unknown = { contents: [{ role: "user", parts: [{ text: "Weather in Paris?" }] }] }, query = "") =>
  fetch(`${base}/v1beta/models/${model}:${method}${query}`, { method: "POST", headers, body: JSON.stringify(body) });
const TOOLS = { tools: [{ functionDeclarations: [{ name: "get_weather", parameters: { type: "OBJECT", properties: { city: { type: "STRING" } } } }] }] };

describe("converted replies", () => {
  test.each(["gpt-4o", "claude-sonnet-4-5", "anthropic.claude-3-5-haiku-20241022-v1:0", "mock"])("%s: the reply and every stream chunk", async (model) => {
    const reply = await call(model, "generateContent");
    expect(reply.status).toBe(200);
    expect(check(REPLY, await reply.json())).toEqual([]);
    const events = await readSse(await call(model, "streamGenerateContent", undefined, "?alt=sse"));
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) expect(check(REPLY, event.data)).toEqual([]);
    expect(JSON.stringify(events.at(-1)!.data)).toContain("finishReason");
  });

  test("a tool call, streamed and not", async () => {
    gateway.openai.next({ kind: "reply", toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' }] });
    const body = { contents: [{ role: "user", parts: [{ text: "Weather?" }] }], ...TOOLS };
    const reply = await (await call("gpt-4o", "generateContent", body)).json();
    expect(reply.candidates[0].content.parts[0].functionCall.name).toBe("get_weather");
    expect(check(REPLY, reply)).toEqual([]);
    gateway.openai.next({ kind: "stream", toolCalls: [{ id: "call_1", name: "get_weather", arguments: ['{"city":', '"Paris"}'] }] });
    for (const event of await readSse(await call("gpt-4o", "streamGenerateContent", body, "?alt=sse"))) expect(check(REPLY, event.data)).toEqual([]);
  });

  test("a stream that breaks ends with an error in Google's envelope", async () => {
    gateway.openai.next({ kind: "stream", breakAfter: 4, gapMs: 5 });
    const events = await readSse(await call("gpt-4o", "streamGenerateContent", undefined, "?alt=sse"));
    expect(events.length).toBeGreaterThan(1);
    const last = events.at(-1)!.data;
    expect(check(ERROR, last)).toEqual([]);
    for (const event of events.slice(0, -1)) expect(check(REPLY, event.data)).toEqual([]);
  });

  test("a passthrough reply is Gemini's own bytes", async () => {
    const reply = await call("gemini-2.5-flash", "generateContent");
    const text = await reply.text();
    expect(text).toBe(JSON.stringify(JSON.parse(text)));
    expect(check(REPLY, JSON.parse(text))).toEqual([]);
  });
});

// The model list's wire shape has no type in the SDK (its Model is what the SDK makes of it): sdk.test.ts reads it with the SDK.
test("counts and embeddings", async () => {
  expect(check(COUNT, await (await call("gpt-4o", "countTokens")).json())).toEqual([]);
  expect(check(COUNT, await (await call("gemini-2.5-flash", "countTokens")).json())).toEqual([]);
  const embed = await call("mock", "batchEmbedContents", { requests: [{ model: "models/mock", content: { parts: [{ text: "a" }] } }] });
  expect(check(EMBEDDINGS, await embed.json())).toEqual([]);
});

describe("errors: Google's envelope with the status word for the code", () => {
  const cases: [string, () => Promise<Response>, number, string][] = [
    ["no key", () => fetch(`${base}/v1beta/models/gpt-4o:generateContent`, { method: "POST", body: "{}" }), 401, "UNAUTHENTICATED"],
    ["an unknown model", () => call("nope-1", "generateContent"), 404, "NOT_FOUND"],
    ["bad JSON", () => fetch(`${base}/v1beta/models/gpt-4o:generateContent`, { method: "POST", headers, body: "{" }), 400, "INVALID_ARGUMENT"],
    ["no contents", () => call("gpt-4o", "generateContent", {}), 400, "INVALID_ARGUMENT"],
    ["a field parley cannot carry across", () => call("gpt-4o", "generateContent", { contents: [{ parts: [{ text: "x" }] }], tools: [{ googleSearch: {} }] }), 400, "INVALID_ARGUMENT"],
    ["a path no endpoint takes", () => fetch(`${base}/v1beta/tunedModels/x:generateContent`, { method: "POST", headers, body: "{}" }), 404, "NOT_FOUND"],
    ["a method the path does not take", () => fetch(`${base}/v1beta/models/gpt-4o:generateContent`, { method: "PUT", headers }), 405, "INVALID_ARGUMENT"],
  ];
  test.each(cases)("%s", async (_name, make, status, word) => {
    const response = await make();
    expect(response.status).toBe(status);
    const body = await response.json();
    expect(check(ERROR, body)).toEqual([]);
    expect(body.error.status).toBe(word);
  });

  test("an upstream's error keeps its status and Gemini's words on a passthrough", async () => {
    gateway.gemini.next({ kind: "error", status: 400, message: "Invalid value at 'contents[0].role'." }, { kind: "error", status: 400, message: "Invalid value at 'contents[0].role'." });
    const response = await call("gemini-2.5-flash", "generateContent");
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(check(ERROR, body)).toEqual([]);
    expect(body.error.message).toContain("Invalid value at 'contents[0].role'.");
  });

  test("the Vertex door's unknown paths answer in Anthropic's envelope, as its endpoints do", async () => {
    const response = await fetch(`${base}/v1/projects/p/locations/l/publishers/anthropic/models/x:predict`, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}` }, body: "{}" });
    expect(response.status).toBe(404);
    expect((await response.json()).type).toBe("error");
  });
});
