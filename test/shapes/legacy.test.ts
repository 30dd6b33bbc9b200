/**
 * The replies parley writes for /v1/embeddings and /v1/completions (the mock's, and Bedrock's
 * embeddings converted), checked against OpenAI's published schemas (test/schemas/openai.json).
 * Passed-through replies are the upstream's bytes: test/endpoints checks they arrive unaltered.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readSse, startGateway } from "../lib/gateway.ts";
import { openaiRef, problems } from "./vendor.ts";

const gateway = await startGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0" });
afterAll(() => gateway.stop());

const EMBEDDERS: [label: string, model: string][] = [
  ["mock", "mock"], ["Bedrock Titan v2", "amazon.titan-embed-text-v2:0"], ["Bedrock Titan v1", "amazon.titan-embed-text-v1"], ["Bedrock Cohere", "cohere.embed-english-v3"],
];

/** A base64 vector as the floats it stands for: OpenAI's schema describes only the float form. */
const asFloats = (body: any) => ({
  ...body,
  data: body.data.map((item: any) => {
    expect(typeof item.embedding).toBe("string");
    const bytes = Buffer.from(item.embedding, "base64");
    return { ...item, embedding: Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)) };
  }),
});

describe("embeddings", () => {
  for (const [label, model] of EMBEDDERS) {
    for (const encoding_format of ["float", "base64"] as const) {
      test(`${label}, ${encoding_format}`, async () => {
        const response = await gateway.json("/v1/embeddings", { model, input: ["first text", "second"], encoding_format });
        expect(response.status).toBe(200);
        const body = await response.json();
        expect(problems(openaiRef("CreateEmbeddingResponse"), encoding_format === "base64" ? asFloats(body) : body)).toEqual([]);
      });
    }
  }

  test("a refusal is OpenAI's error", async () => {
    const response = await gateway.json("/v1/embeddings", { model: "mock", input: 42 });
    expect(response.status).toBe(422);
    expect(problems(openaiRef("ErrorResponse"), await response.json())).toEqual([]);
  });
});

describe("legacy completions", () => {
  test("the mock, JSON", async () => {
    const response = await gateway.json("/v1/completions", { model: "mock", prompt: "def f(", suffix: "\n" });
    expect(problems(openaiRef("CreateCompletionResponse"), await response.json())).toEqual([]);
  });

  test("the mock, streamed: each chunk is a completion object (OpenAI's spec has no chunk schema; finish_reason is null until the last)", async () => {
    const response = await gateway.json("/v1/completions", { model: "mock", prompt: "def f(", stream: true, stream_options: { include_usage: true } });
    const events = await readSse(response);
    expect(events.at(-1)!.data).toBe("[DONE]");
    const found = events.slice(0, -1).flatMap(({ data }) => {
      const chunk = { ...data, choices: data.choices.map((c: any) => ({ ...c, finish_reason: c.finish_reason ?? "stop" })) };
      return problems(openaiRef("CreateCompletionResponse"), chunk);
    });
    expect(found).toEqual([]);
  });

  test("another kind's 400 is OpenAI's error", async () => {
    const response = await gateway.json("/v1/completions", { model: "amazon.titan-text-express-v1", prompt: "x" });
    expect(response.status).toBe(400);
    expect(problems(openaiRef("ErrorResponse"), await response.json())).toEqual([]);
  });
});
