import { describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import { GatewayError } from "../../src/errors.ts";
import type { ChatReply, StreamEvent } from "../../src/ir.ts";
import { encodeCountReply } from "../../src/wire/gemini/count.ts";
import { encodeEmbeddings } from "../../src/wire/gemini/embeddings.ts";
import { errorBody } from "../../src/wire/gemini/errors.ts";
import { encodeReply } from "../../src/wire/gemini/reply.ts";
import { streamEncoder } from "../../src/wire/gemini/stream.ts";
import gemini from "../schemas/gemini.json" with { type: "json" };

/**
 * What the Gemini wire module writes for Gemini's clients, checked against the @google/genai SDK's
 * own types (test/schemas/gemini.json, from scripts/vendor-schemas.ts); the recorded fixtures too.
 */
const ajv = new Ajv2020({ strict: false, allErrors: true }).addSchema(gemini);
const ref = (name: string) => ({ $ref: `gemini.json#/definitions/${name}` });
const REPLY = ajv.compile({
  type: "object",
  properties: { candidates: { type: "array", items: ref("Candidate") }, usageMetadata: ref("GenerateContentResponseUsageMetadata"), promptFeedback: ref("GenerateContentResponsePromptFeedback"), modelVersion: { type: "string" }, responseId: { type: "string" }, createTime: { type: "string" } },
  additionalProperties: false,
});
/** Google's error envelope (google.rpc.Status in JSON): the SDK has no type for it. */
const ERROR = ajv.compile({
  type: "object",
  required: ["error"],
  properties: { error: { type: "object", required: ["code", "message", "status"], properties: { code: { type: "integer" }, message: { type: "string" }, status: { type: "string", pattern: "^[A-Z_]+$" }, details: { type: "array" } }, additionalProperties: false } },
  additionalProperties: false,
});
const check = (validate: ReturnType<typeof ajv.compile>, body: unknown) => {
  validate(body);
  return validate.errors ?? [];
};

const replies: Record<string, ChatReply> = {
  text: { id: "r", content: [{ type: "text", text: "Hi" }], finish: { reason: "stop", raw: "end_turn" }, usage: { input: { total: 10, cacheRead: 4, cacheWrite: 2 }, output: 3 } },
  tools: { content: [{ type: "reasoning", text: "think" }, { type: "reasoning", text: "", signature: "gemini:S" }, { type: "tool_call", id: "c", name: "f", arguments: '{"a":[1,2]}' }], finish: { reason: "tool_calls", raw: "tool_use" } },
  cut: { content: [{ type: "text", text: "Hal" }], finish: { reason: "length", raw: "length" } },
  refused: { content: [], finish: { reason: "content_filter", raw: "refusal" } },
  odd: { content: [{ type: "reasoning", text: "", signature: "gemini:Last" }], finish: { reason: "other", raw: "something" } },
};

describe("the SDK's types", () => {
  test.each(Object.keys(replies))("a %s reply", (name) => {
    expect(check(REPLY, encodeReply(replies[name]!, "gemini-2.5-pro"))).toEqual([]);
  });

  test("every chunk of a stream, and its error", () => {
    const encoder = streamEncoder("gemini-2.5-pro");
    const events: StreamEvent[] = [
      { type: "start" }, { type: "reasoning", text: "hm" }, { type: "text", text: "a" }, { type: "tool_call", index: 0, id: "x", name: "f" },
      { type: "tool_args", index: 0, text: "{}" }, { type: "finish", finish: { reason: "tool_calls", raw: "tool_calls" } }, { type: "usage", usage: { output: 1 } },
    ];
    const chunks = [...events.flatMap((e) => encoder.event(e)), ...encoder.end()];
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) expect(check(REPLY, chunk.data)).toEqual([]);
    for (const status of [400, 401, 403, 404, 429, 500, 502, 503, 504]) {
      const error = new GatewayError(status, "invalid_request_error", "x", { overflow: status === 400 ? { tokens: 9, limit: 8 } : undefined });
      expect(check(ERROR, errorBody(error))).toEqual([]);
    }
    expect(check(ERROR, encoder.error(new GatewayError(503, "service_unavailable_error", "gone"))[0]!.data)).toEqual([]);
  });

  test("counts and embeddings", () => {
    const count = ajv.compile(ref("CountTokensResponse"));
    expect(check(count, encodeCountReply(12))).toEqual([]);
    const one = ajv.compile({ type: "object", properties: { embedding: ref("ContentEmbedding") }, required: ["embedding"], additionalProperties: false });
    const batch = ajv.compile({ type: "object", properties: { embeddings: { type: "array", items: ref("ContentEmbedding") } }, required: ["embeddings"], additionalProperties: false });
    expect(check(one, encodeEmbeddings({ vectors: [[0.1, 0.2]], inputTokens: 2 }, false))).toEqual([]);
    expect(check(batch, encodeEmbeddings({ vectors: [[0.1], [0.2]], inputTokens: 2 }, true))).toEqual([]);
  });

  test.each(["reply-text.json", "reply-function-call.json", "reply-thoughts.json", "reply-blocked.json"])("the recorded fixture %s", async (name) => {
    expect(check(REPLY, await Bun.file(new URL(`./fixtures/gemini/${name}`, import.meta.url)).json())).toEqual([]);
  });
});
