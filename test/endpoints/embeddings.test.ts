/**
 * POST /v1/embeddings (contract 18) through the official openai SDK and plain HTTP: passed through to
 * an OpenAI-compatible upstream, converted for Titan and Cohere on a fake Bedrock that checks their
 * InvokeModel bodies as Bedrock does, and answered by the mock.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { fakeVector } from "../lib/fake-bedrock.ts";
import { fakeEmbedding } from "../lib/fake-openai.ts";
import { startGateway, TEST_KEY } from "../lib/gateway.ts";

const gateway = await startGateway({ RATE_LIMIT_RPM: "0", UPSTREAM_RETRIES: "1", MODEL_ALIASES: "embedder=text-embedding-3-large", MODEL_FALLBACKS: "text-embedding-ada-002=mock" });
const client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gateway.listen()}/v1`, maxRetries: 0 });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const SMALL = "text-embedding-3-small";
const TITAN_V2 = "amazon.titan-embed-text-v2:0";
const TITAN_V1 = "amazon.titan-embed-text-v1";
const COHERE = "cohere.embed-english-v3";
const post = (body: object) => gateway.json("/v1/embeddings", body);
const norm = (v: ArrayLike<number>) => Math.sqrt(Array.from(v).reduce((s, x) => s + x * x, 0));
/** What the SDK decodes a base64 vector into: float32, so compared at float32's precision. */
const close = (got: ArrayLike<number>, want: number[]) => {
  expect(got.length).toBe(want.length);
  Array.from(got).forEach((x, i) => expect(x).toBeCloseTo(want[i]!, 6));
};

describe("passthrough to an openai upstream", () => {
  test("the body goes up as sent and the reply comes back byte for byte; usage and cost recorded", async () => {
    const body = { model: SMALL, input: ["alpha", "beta gamma"], dimensions: 4, encoding_format: "float", user: "u-1" };
    const response = await post(body);
    expect(response.status).toBe(200);
    expect(gateway.openai.last().path).toBe("/v1/embeddings");
    expect(gateway.openai.last().raw).toBe(JSON.stringify(body));
    const text = await response.text();
    expect(JSON.parse(text).data[1].embedding).toEqual(fakeEmbedding("beta gamma", 4));
    expect(response.headers.get("x-parley-upstream")).toBe("alpha");
    // 1 + 2 tokens at $0.02 a million.
    expect(Number(response.headers.get("x-parley-cost-usd"))).toBeCloseTo(3 * 0.02 / 1e6, 12);

    const own = `{"object": "list", "data": [ {"object":"embedding","index":0,"embedding":[0.6,0.8]} ],"model":"${SMALL}","usage":{"prompt_tokens":1,"total_tokens":1}, "x_server": 1}`;
    gateway.openai.next({ kind: "raw", body: own });
    expect(await (await post(body)).text()).toBe(own);
  });

  test("embeddings.create, floats and the SDK's default base64, with dimensions", async () => {
    const floats = await client.embeddings.create({ model: SMALL, input: "hello", dimensions: 6, encoding_format: "float" });
    expect(floats.data[0]!.embedding).toEqual(fakeEmbedding("hello", 6));
    expect(gateway.openai.last().body.encoding_format).toBe("float");

    const decoded = await client.embeddings.create({ model: SMALL, input: ["hello", "hi"], dimensions: 6 });
    expect(gateway.openai.last().body.encoding_format).toBe("base64");
    close(decoded.data[0]!.embedding, fakeEmbedding("hello", 6));
    close(decoded.data[1]!.embedding, fakeEmbedding("hi", 6));
    expect(decoded.usage.prompt_tokens).toBe(2);
  });

  test("token arrays go up untouched", async () => {
    const response = await post({ model: SMALL, input: [[1, 2, 3], [4]] });
    expect(response.status).toBe(200);
    expect(gateway.openai.last().body.input).toEqual([[1, 2, 3], [4]]);
    expect((await response.json()).data).toHaveLength(2);
  });

  test("an alias goes up as the upstream's id; the reply is the upstream's", async () => {
    const response = await post({ model: "embedder", input: "x" });
    expect(response.status).toBe(200);
    expect(gateway.openai.last().body.model).toBe("text-embedding-3-large");
    expect(response.headers.get("x-parley-model")).toBe("text-embedding-3-large");
  });

  test("a 503 is retried; a fallback model answers when the upstream keeps failing", async () => {
    gateway.openai.next({ kind: "error", status: 503, message: "busy" });
    const retried = await post({ model: SMALL, input: "x" });
    expect(retried.status).toBe(200);
    expect(retried.headers.get("x-parley-attempts")).toBe("2");

    gateway.openai.next({ kind: "error", status: 503, message: "busy" });
    gateway.openai.next({ kind: "error", status: 503, message: "busy" });
    const fellBack = await post({ model: "text-embedding-ada-002", input: "x", dimensions: 3 });
    expect(fellBack.status).toBe(200);
    expect(fellBack.headers.get("x-parley-upstream")).toBe("mock");
    expect((await fellBack.json()).data[0].embedding).toHaveLength(3);
  });

  test("an upstream's 400 reaches the client in OpenAI's envelope, not retried", async () => {
    gateway.openai.next({ kind: "error", status: 400, message: "dimensions too large" });
    const error = await client.embeddings.create({ model: SMALL, input: "x", dimensions: 99999 }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(gateway.openai.received).toHaveLength(1);
  });
});

describe("Titan Text Embeddings on Bedrock", () => {
  test("one InvokeModel call per input with dimensions and normalize; floats in order, tokens summed", async () => {
    const texts = ["one", "two words", "three little words"];
    const reply = await client.embeddings.create({ model: TITAN_V2, input: texts, dimensions: 256, encoding_format: "float" });
    const calls = gateway.bedrock.received;
    expect(calls.map((c) => c.action)).toEqual(["invoke", "invoke", "invoke"]);
    expect(calls.map((c) => c.modelId)).toEqual([TITAN_V2, TITAN_V2, TITAN_V2]);
    expect(calls.map((c) => c.body).sort((a, b) => a.inputText.length - b.inputText.length)).toEqual(texts.map((inputText) => ({ inputText, dimensions: 256, normalize: true })));
    reply.data.forEach((item, i) => {
      expect(item.index).toBe(i);
      expect(item.embedding).toEqual(fakeVector(texts[i]!, 256));
    });
    expect(reply.model).toBe(TITAN_V2);
    expect(reply.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
  });

  test("base64, as the SDK asks by default: the same vectors, decoded", async () => {
    const reply = await client.embeddings.create({ model: TITAN_V2, input: "hello there" });
    close(reply.data[0]!.embedding, fakeVector("hello there", 1024));
    expect(norm(reply.data[0]!.embedding)).toBeCloseTo(1, 5);
  });

  test("many inputs: every one answered, in order, with a bounded number of calls in flight", async () => {
    const texts = Array.from({ length: 40 }, (_, i) => "x".repeat(i + 1));
    gateway.bedrock.calls.delayMs = 20;
    const response = await post({ model: TITAN_V2, input: texts, dimensions: 512 });
    expect(gateway.bedrock.calls.most).toBeGreaterThan(1);
    expect(gateway.bedrock.calls.most).toBeLessThanOrEqual(8);
    expect(response.status).toBe(200);
    const data = (await response.json()).data;
    expect(data.map((d: any) => d.embedding[0])).toEqual(texts.map((t) => fakeVector(t, 512)[0]));
    expect(gateway.bedrock.received).toHaveLength(40);
  });

  test("Bedrock's refusal of a dimension it does not make is the client's 400", async () => {
    const response = await post({ model: TITAN_V2, input: "x", dimensions: 300 });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toContain("dimensions");
  });

  test("a throttled call fails the request, which is retried whole", async () => {
    gateway.bedrock.next({ kind: "error", status: 429, type: "ThrottlingException", message: "Too many requests" });
    const response = await post({ model: TITAN_V2, input: ["a", "b"] });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-parley-attempts")).toBe("2");
  });

  test("v1 takes the text alone and makes 1536 numbers; dimensions on it is a 400 saying so", async () => {
    const reply = await client.embeddings.create({ model: TITAN_V1, input: "legacy", encoding_format: "float" });
    expect(gateway.bedrock.last().body).toEqual({ inputText: "legacy" });
    expect(reply.data[0]!.embedding).toHaveLength(1536);
    gateway.bedrock.reset();
    const refused = await post({ model: TITAN_V1, input: "legacy", dimensions: 256 });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.message).toContain("1536 dimensions only");
    expect(gateway.bedrock.received).toHaveLength(0);
  });
});

describe("Cohere Embed on Bedrock", () => {
  test("texts in batches of 96 with input_type search_document; vectors in order; tokens from Bedrock's header", async () => {
    const texts = Array.from({ length: 100 }, (_, i) => `text number ${i}`);
    const reply = await client.embeddings.create({ model: COHERE, input: texts, encoding_format: "float" });
    const calls = gateway.bedrock.received;
    expect(calls.map((c) => c.body.texts.length)).toEqual([96, 4]);
    expect(calls[0]!.body).toEqual({ texts: texts.slice(0, 96), input_type: "search_document" });
    expect(reply.data).toHaveLength(100);
    expect(reply.data[99]!.embedding).toEqual(fakeVector("text number 99", 1024));
    expect(reply.usage.prompt_tokens).toBe(300);
  });

  test("input_type and dimensions go to Cohere; base64 decodes to its floats", async () => {
    // input_type is Cohere's, not in the SDK's types: sent as an extra body field.
    const reply = await client.embeddings.create({ model: "cohere.embed-v4:0", input: "query text", dimensions: 256 }, { body: { model: "cohere.embed-v4:0", input: "query text", dimensions: 256, input_type: "search_query", encoding_format: "base64" } });
    expect(gateway.bedrock.last().body).toEqual({ texts: ["query text"], input_type: "search_query", output_dimension: 256 });
    close(reply.data[0]!.embedding, fakeVector("query text", 256));
  });

  test("Embed v3 with dimensions is a 400 naming dimensions; nothing goes to Bedrock (it refuses output_dimension)", async () => {
    const response = await post({ model: COHERE, input: "a", dimensions: 256 });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toContain("'dimensions'");
    expect(gateway.bedrock.received).toHaveLength(0);
  });

  test("the reply by type ({ float: [...] }) is read too", async () => {
    gateway.bedrock.next({ kind: "json", body: { id: "e", texts: ["a"], response_type: "embeddings_by_type", embeddings: { float: [[0.6, 0.8]] } } });
    const response = await post({ model: COHERE, input: "a" });
    expect((await response.json()).data[0].embedding).toEqual([0.6, 0.8]);
  });

  test("a reply with fewer vectors than texts is the upstream failing (503)", async () => {
    gateway.bedrock.next({ kind: "json", body: { embeddings: [[1]] } });
    const response = await gateway.json("/v1/embeddings", { model: COHERE, input: ["a", "b"] });
    expect(response.status).toBe(503);
  });
});

describe("the mock", () => {
  test("unit vectors of 1536 numbers; the same text gets the same vector, another text another", async () => {
    const reply = await client.embeddings.create({ model: "mock", input: ["same", "same", "other"], encoding_format: "float" });
    const [a, b, c] = reply.data.map((d) => d.embedding);
    expect(a).toHaveLength(1536);
    expect(a).toEqual(b!);
    expect(a).not.toEqual(c!);
    expect(norm(a!)).toBeCloseTo(1, 10);
    const again = await client.embeddings.create({ model: "mock", input: "same", encoding_format: "float" });
    expect(again.data[0]!.embedding).toEqual(a!);
  });

  test("dimensions honoured; base64 decodes to the same unit vector", async () => {
    const floats = await client.embeddings.create({ model: "mock", input: "code", dimensions: 64, encoding_format: "float" });
    const decoded = await client.embeddings.create({ model: "mock", input: "code", dimensions: 64 });
    expect(floats.data[0]!.embedding).toHaveLength(64);
    close(decoded.data[0]!.embedding, floats.data[0]!.embedding);
    expect(norm(decoded.data[0]!.embedding)).toBeCloseTo(1, 5);
  });

  test("token arrays are refused off openai upstreams, naming the upstream's kind", async () => {
    const response = await post({ model: "mock", input: [1, 2, 3] });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toContain("kind mock");
  });
});

describe("what every endpoint has", () => {
  test("a Bedrock model that makes no embeddings is a 400 naming the endpoint; nothing is sent", async () => {
    const response = await post({ model: "anthropic.claude-3-5-haiku-20241022-v1:0", input: "x" });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toContain("POST /v1/embeddings on Bedrock");
    expect(gateway.bedrock.received).toHaveLength(0);
  });

  test("bad requests are 400/422 in OpenAI's envelope", async () => {
    for (const [body, status, param] of [
      [{ model: "mock" }, 400, "input"],
      [{ input: "x" }, 400, "model"],
      [{ model: "mock", input: 42 }, 422, "input"],
      [{ model: "mock", input: [] }, 422, "input"],
      [{ model: "mock", input: "x", encoding_format: "int8" }, 422, "encoding_format"],
      [{ model: "mock", input: "x", dimensions: 0 }, 422, "dimensions"],
    ] as const) {
      const response = await post(body);
      expect(response.status).toBe(status);
      expect((await response.json()).error).toMatchObject({ param });
    }
  });

  test("an unknown model is 404; no key is 401", async () => {
    expect((await post({ model: "no-such-embedder", input: "x" })).status).toBe(404);
    expect((await gateway.json("/v1/embeddings", { model: "mock", input: "x" }, { key: null })).status).toBe(401);
  });
});
