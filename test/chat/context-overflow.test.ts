import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { startGateway } from "../lib/gateway.ts";

/**
 * A prompt over the model's context, in each upstream's own words, reaches each client in its
 * vendor's canonical form: the one clients compact and retry on (contract 3). opencode took
 * llama.cpp's words for an attachment error and sent 832 requests in two minutes.
 */
const gateway = await startGateway({ UPSTREAM_RETRIES: "2" });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const CLAUDE = "anthropic.claude-3-5-sonnet-20241022-v2:0";
const hello = [{ role: "user", content: "a very long prompt" }];

type Upstream = { openai: string } | { bedrock: string };
/** What the upstream answered, and the token counts in it (prompt, context). */
const wordings: [string, Upstream, [number, number] | undefined][] = [
  ["llama.cpp, counts in fields", { openai: JSON.stringify({ error: { code: 400, message: "the request exceeds the available context size, try increasing it", type: "exceed_context_size_error", n_prompt_tokens: 3000, n_ctx: 2048 } }) }, [3000, 2048]],
  ["llama.cpp, counts in words", { openai: JSON.stringify({ error: { code: 400, message: "request (3001 tokens) exceeds the available context size (2048 tokens), try increasing it", type: "exceed_context_size_error" } }) }, [3001, 2048]],
  ["vLLM", { openai: JSON.stringify({ object: "error", message: "This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. Please reduce the length of the input messages.", type: "BadRequestError", param: null, code: 400 }) }, [5000, 4096]],
  ["Ollama", { openai: JSON.stringify({ error: { message: "prompt too long; exceeded max context length by 952 tokens", type: "api_error", param: null, code: null } }) }, undefined],
  ["Ollama, native shape", { openai: JSON.stringify({ error: "the input length exceeds the context length" }) }, undefined],
  ["OpenAI chat", { openai: JSON.stringify({ error: { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.", type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } }) }, [130000, 128000]],
  ["OpenAI Responses", { openai: JSON.stringify({ error: { message: "Your input exceeds the context window of this model. Please adjust your input and try again.", type: "invalid_request_error", param: "input", code: "context_length_exceeded" } }) }, undefined],
  ["Bedrock", { bedrock: "Input is too long for requested model." }, undefined],
  ["Claude on Bedrock", { bedrock: "prompt is too long: 210000 tokens > 200000 maximum" }, [210000, 200000]],
];

const dialects = {
  "chat completions": { path: "/v1/chat/completions", body: (model: string, stream: boolean) => ({ model, stream, messages: hello }) },
  Responses: { path: "/v1/responses", body: (model: string, stream: boolean) => ({ model, stream, input: "a very long prompt" }) },
  "Anthropic messages": { path: "/v1/messages", body: (model: string, stream: boolean) => ({ model, stream, max_tokens: 100, messages: hello }) },
};

/** What each dialect's clients act on. */
function expected(dialect: keyof typeof dialects, counts: [number, number] | undefined): unknown {
  if (dialect === "Anthropic messages") {
    const message = counts ? `prompt is too long: ${counts[0]} tokens > ${counts[1]} maximum` : expect.stringMatching(/^prompt is too long/);
    return { type: "error", error: { type: "invalid_request_error", message } };
  }
  const message = counts
    ? `This model's maximum context length is ${counts[1]} tokens. However, your messages resulted in ${counts[0]} tokens. Please reduce the length of the messages.`
    : expect.stringMatching(/^Your input exceeds the context window of this model/);
  if (dialect === "Responses") return { error: { message, type: "invalid_request_error", param: null, code: "context_length_exceeded" } };
  return { error: { type: "invalid_request_error", message, code: "context_length_exceeded" } };
}

describe("a prompt over the model's context, in each dialect's canonical form", () => {
  for (const [name, upstream, counts] of wordings) {
    for (const dialect of Object.keys(dialects) as (keyof typeof dialects)[]) {
      for (const stream of [false, true]) {
        test(`${name}, asked in ${dialect}${stream ? ", streamed" : ""}`, async () => {
          const model = "openai" in upstream ? "gpt-4o" : CLAUDE;
          if ("openai" in upstream) gateway.openai.next({ kind: "raw", status: 400, body: upstream.openai, contentType: "application/json" });
          else gateway.bedrock.next({ kind: "error", status: 400, type: "ValidationException", message: upstream.bedrock });
          const { path, body } = dialects[dialect];
          const response = await gateway.json(path, body(model, stream), { headers: { "anthropic-version": "2023-06-01" } });
          expect(response.status).toBe(400);
          expect(await response.json()).toEqual(expected(dialect, counts));
          // Never retried: the same prompt gets the same answer.
          expect(gateway.openai.received.length + gateway.bedrock.received.length).toBe(1);
        });
      }
    }
  }

  test("a 400 that is not about the context keeps its own words", async () => {
    gateway.openai.next({ kind: "error", status: 400, message: "Invalid value for 'temperature'." });
    const response = await gateway.json("/v1/responses", { model: "gpt-4o", input: "hi" });
    expect(response.status).toBe(400);
    const { error } = await response.json();
    expect({ code: error.code, message: error.message }).toEqual({ code: null, message: expect.stringContaining("Invalid value for 'temperature'.") });
  });

  test("Bedrock throttling that speaks of tokens is still a 429", async () => {
    gateway.bedrock.next({ kind: "error", status: 429, type: "ThrottlingException", message: "Too many tokens, please wait before trying again." }, { kind: "error", status: 429, type: "ThrottlingException", message: "Too many tokens" }, { kind: "error", status: 429, type: "ThrottlingException", message: "Too many tokens" });
    const response = await gateway.json("/v1/chat/completions", { model: CLAUDE, messages: hello });
    expect(response.status).toBe(429);
  });
});
