import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { detectFormat } from "../../src/wire/detect.ts";
import { testApp } from "../lib/app.ts";
import { readSse, startGateway } from "../lib/gateway.ts";

const gateway = await startGateway({ UPSTREAM_RETRIES: "0" });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const CLAUDE = "anthropic.claude-3-5-sonnet-20241022-v2:0";
const hello = [{ role: "user", content: "hi" }];

async function expectError(response: Response, status: number, type: string, details?: RegExp) {
  const body = await response.json();
  expect({ status: response.status, type: body.error.type }).toEqual({ status, type });
  expect(body.error.message.length).toBeGreaterThan(0);
  if (details) expect(body.error.details).toMatch(details);
  expect(response.headers.get("x-request-id")).toBeTruthy();
  return body.error as { type: string; message: string; details?: string };
}

const post = (body: unknown, query = "") =>
  gateway.call(`/v1/chat/completions${query}`, { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body), headers: { "content-type": "application/json" } });

describe("format detection, first rule wins", () => {
  const cases: [string, object, string][] = [
    ["inputText", { inputText: "hi", messages: [] }, "beta_textgen"],
    ["vendor_version", { vendor_version: "2023-06-01", messages: [] }, "beta_messages"],
    ["anthropic_version", { anthropic_version: "bedrock-2023-05-31" }, "beta_messages"],
    ["top-level system", { system: "x", messages: [] }, "beta_messages"],
    ["stop_sequences", { stop_sequences: ["x"] }, "beta_messages"],
    ["top_k", { top_k: 5 }, "beta_messages"],
    ["input_schema tool", { tools: [{ name: "f", input_schema: {} }] }, "beta_messages"],
    ["tool_choice {type}", { tool_choice: { type: "any" } }, "beta_messages"],
    ["OpenAI tool_choice object", { tool_choice: { type: "function", function: { name: "f" } } }, "alpha"],
    ["image block", { messages: [{ role: "user", content: [{ type: "image", source: {} }] }] }, "beta_messages"],
    ["tool_result block", { messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "x" }] }] }, "beta_messages"],
    ["plain OpenAI", { model: "gpt-4o", messages: hello }, "alpha"],
  ];
  for (const [name, body, format] of cases) test(`${name} -> ${format}`, () => expect(detectFormat(body as never) as string).toBe(format));
});

describe("bad requests never reach the upstream", () => {
  const cases: [string, unknown, number, string, RegExp?][] = [
    ["malformed JSON", "{\"model\": ", 400, "invalid_request_error"],
    ["an empty body", "", 400, "invalid_request_error"],
    ["a JSON array", [1, 2], 400, "invalid_request_error"],
    ["a JSON string", "\"hello\"", 400, "invalid_request_error"],
    ["messages missing", { model: "gpt-4o" }, 400, "invalid_request_error", /messages/],
    ["messages empty", { model: "gpt-4o", messages: [] }, 422, "validation_error", /messages/],
    ["an unknown role", { model: "gpt-4o", messages: [{ role: "wizard", content: "x" }] }, 422, "validation_error", /messages\[0\]\.role/],
    ["max_tokens zero", { model: "gpt-4o", messages: hello, max_tokens: 0 }, 422, "validation_error", /max_tokens: must be a positive integer/],
    ["max_tokens fractional", { model: "gpt-4o", messages: hello, max_tokens: 1.5 }, 422, "validation_error", /max_tokens/],
    ["max_tokens a string", { model: "gpt-4o", messages: hello, max_tokens: "10" }, 422, "validation_error", /max_tokens/],
    ["alpha temperature 2.5", { model: "gpt-4o", messages: hello, temperature: 2.5 }, 422, "validation_error", /temperature: must be a number from 0 to 2/],
    ["beta_messages temperature 1.5", { anthropic_version: "x", model: CLAUDE, messages: hello, temperature: 1.5 }, 422, "validation_error", /temperature: must be a number from 0 to 1/],
    ["maxTokenCount negative", { model: "amazon.titan-text-express-v1", inputText: "x", textGenerationConfig: { maxTokenCount: -5 } }, 422, "validation_error", /maxTokenCount/],
    ["titan temperature 1.2", { model: "amazon.titan-text-express-v1", inputText: "x", textGenerationConfig: { temperature: 1.2 } }, 422, "validation_error", /temperature/],
    ["tool call without an id", { model: "gpt-4o", messages: [{ role: "assistant", tool_calls: [{ function: { name: "f" } }] }] }, 422, "validation_error"],
    ["no model and no default", { messages: hello }, 400, "invalid_request_error", /model/],
    ["an unknown model", { model: "llama-9000", messages: hello }, 404, "not_found_error"],
    ["tool arguments that are not JSON, for Bedrock", { model: CLAUDE, messages: [{ role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{oops" } }] }] }, 400, "invalid_request_error"],
    ["tools for Titan", { model: "amazon.titan-text-express-v1", messages: hello, tools: [{ type: "function", function: { name: "f" } }] }, 400, "invalid_request_error"],
  ];
  for (const [name, body, status, type, details] of cases) {
    test(`${name}: ${status} ${type}`, async () => {
      await expectError(await post(body), status, type, details);
      expect(gateway.openai.received.length + gateway.bedrock.received.length).toBe(0);
    });
  }

  test("an unknown model is named in the message", async () => {
    const error = await expectError(await post({ model: "llama-9000", messages: hello }), 404, "not_found_error");
    expect(error.message).toContain("llama-9000");
  });

  test("an unknown target_format lists the allowed values", async () => {
    const error = await expectError(await post({ model: "gpt-4o", messages: hello }, "?target_format=xml"), 400, "invalid_request_error");
    expect(error.details).toContain("beta_messages");
  });

  test("the aliases of format names are accepted", async () => {
    for (const name of ["openai", "anthropic", "bedrock_claude", "titan", "bedrock_titan"]) {
      expect((await post({ model: "gpt-4o", messages: hello }, `?target_format=${name}`)).status).toBe(200);
    }
  });
});

describe("a provider without configuration: a 404 naming the upstream and the variable, never retried", () => {
  // A 503 here made Claude Code retry in silence for three minutes: nothing a retry does changes it.
  const bare = testApp({ UPSTREAM_RETRIES: "2" });
  const dialects: [string, string, (model: string) => object, string][] = [
    ["chat completions", "/v1/chat/completions", (model) => ({ model, messages: hello }), "not_found_error"],
    ["Anthropic messages", "/v1/messages", (model) => ({ model, max_tokens: 10, messages: hello }), "not_found_error"],
    ["Responses", "/v1/responses", (model) => ({ model, input: "hi" }), "invalid_request_error"],
  ];
  for (const [dialect, path, body, type] of dialects) {
    for (const [upstream, model, names] of [["OpenAI", "gpt-4o", /upstream 'alpha' \(openai\) is not configured: set ALPHA_API_KEY/], ["Bedrock", CLAUDE, /upstream 'beta' \(bedrock\) is not configured: set BETA_REGION/]] as const) {
      test(`${upstream}, asked in ${dialect}`, async () => {
        const response = await bare.json(path, body(model));
        const error = await expectError(response, 404, type);
        expect(error.message).toMatch(names);
        expect(response.headers.get("x-parley-attempts") ?? "1").toBe("1");
        expect(response.headers.get("retry-after")).toBeNull();
      });
    }
  }
  test("missing AWS credentials are a 404 naming the variables", async () => {
    const noCreds = testApp({ BETA_REGION: "us-east-1", BETA_ENDPOINT_URL: "http://127.0.0.1:9", AWS_SHARED_CREDENTIALS_FILE: "/nonexistent", AWS_CONFIG_FILE: "/nonexistent" });
    const error = await expectError(await noCreds.json("/v1/chat/completions", { model: CLAUDE, messages: hello }), 404, "not_found_error");
    expect(error.message).toContain("BETA_ACCESS_KEY_ID");
  });
});

describe("upstream errors map onto the contract", () => {
  const openaiCases: [string, number, number, string][] = [
    ["rate limited", 429, 429, "rate_limit_error"],
    ["server error", 500, 503, "service_unavailable_error"],
    ["overloaded", 503, 503, "service_unavailable_error"],
    ["our key rejected", 401, 502, "service_unavailable_error"],
    ["forbidden", 403, 403, "permission_error"],
    ["bad request", 400, 400, "invalid_request_error"],
    ["unknown model", 404, 404, "not_found_error"],
    ["gateway timeout", 504, 504, "service_unavailable_error"],
  ];
  for (const [name, upstream, status, type] of openaiCases) {
    for (const [path, body] of [["passthrough", { model: "gpt-4o", messages: hello }], ["converted", { model: "gpt-4o", messages: hello }]] as const) {
      test(`OpenAI ${name} (${upstream}) via ${path}: ${status}`, async () => {
        gateway.openai.next({ kind: "error", status: upstream, message: `upstream says ${name}`, headers: upstream === 429 ? { "retry-after": "7" } : {} });
        const response = await post(body, path === "converted" ? "?target_format=beta_messages" : "");
        const error = await expectError(response, status, type);
        if (status === 429) {
          expect(response.headers.get("retry-after")).toBe("7");
          expect(error.details).toContain("7 seconds");
        }
        if (status === 400) expect(error.message).toContain(`upstream says ${name}`);
      });
    }
  }

  const bedrockCases: [string, number, number, string][] = [
    ["ThrottlingException", 429, 429, "rate_limit_error"],
    ["ValidationException", 400, 400, "invalid_request_error"],
    ["AccessDeniedException", 403, 403, "permission_error"],
    ["UnrecognizedClientException", 403, 502, "service_unavailable_error"],
    ["ResourceNotFoundException", 404, 404, "not_found_error"],
    ["ModelTimeoutException", 408, 504, "service_unavailable_error"],
    ["ServiceUnavailableException", 503, 503, "service_unavailable_error"],
    ["InternalServerException", 500, 503, "service_unavailable_error"],
  ];
  for (const [name, upstream, status, type] of bedrockCases) {
    for (const stream of [false, true]) {
      test(`Bedrock ${name}${stream ? " (stream)" : ""}: ${status}`, async () => {
        gateway.bedrock.next({ kind: "error", status: upstream, type: name, message: `bedrock says ${name}` });
        const response = await post({ model: CLAUDE, stream, messages: hello });
        await expectError(response, status, type);
        if (status === 429) expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
      });
    }
  }

  test("DEBUG=true shows the upstream's text in details; otherwise it stays out", async () => {
    gateway.openai.next({ kind: "error", status: 500, message: "secret-ish upstream trace" });
    expect(JSON.stringify(await (await post({ model: "gpt-4o", messages: hello })).json())).not.toContain("secret-ish");
    const debug = await startGateway({ DEBUG: "true", UPSTREAM_RETRIES: "0" });
    try {
      debug.openai.next({ kind: "error", status: 500, message: "secret-ish upstream trace" });
      const error = await expectError(await debug.json("/v1/chat/completions", { model: "gpt-4o", messages: hello }), 503, "service_unavailable_error");
      expect(error.details).toBe("secret-ish upstream trace");
    } finally {
      await debug.stop();
    }
  });

  test("a refused connection is 503, for both providers", async () => {
    const closed = Bun.serve({ port: 0, fetch: () => new Response() });
    const port = closed.port;
    closed.stop(true);
    const down = testApp({ ALPHA_BASE_URL: `http://127.0.0.1:${port}/v1`, BETA_REGION: "us-east-1", BETA_ENDPOINT_URL: `http://127.0.0.1:${port}`, BETA_ACCESS_KEY_ID: "AKIAX", BETA_SECRET_ACCESS_KEY: "x" });
    for (const body of [{ model: "gpt-4o", messages: hello }, { model: "gpt-4o", messages: hello, stream: true, max_tokens: 5 }, { model: CLAUDE, messages: hello }]) {
      await expectError(await down.json("/v1/chat/completions?target_format=alpha", body), 503, "service_unavailable_error");
    }
  });

  test("an upstream that sends nothing within UPSTREAM_TIMEOUT_MS is 504, for both providers", async () => {
    const slow = await startGateway({ UPSTREAM_TIMEOUT_MS: "300", UPSTREAM_RETRIES: "0" });
    try {
      for (const body of [{ model: "gpt-4o", messages: hello }, { model: "gpt-4o", messages: hello, stream: true }, { model: "gpt-4o", messages: hello, system: "converted" }]) {
        slow.openai.next({ kind: "hang" });
        const started = performance.now();
        await expectError(await slow.json("/v1/chat/completions", body), 504, "service_unavailable_error");
        expect(performance.now() - started).toBeLessThan(5000);
      }
      for (const stream of [false, true]) {
        slow.bedrock.next({ kind: "hang" });
        await expectError(await slow.json("/v1/chat/completions", { model: CLAUDE, stream, messages: hello }), 504, "service_unavailable_error");
      }
    } finally {
      await slow.stop();
    }
  });

  test("a stream that goes silent for longer than UPSTREAM_TIMEOUT_MS is cut with an error event", async () => {
    const slow = await startGateway({ UPSTREAM_TIMEOUT_MS: "1000", UPSTREAM_RETRIES: "0" });
    try {
      slow.openai.next({ kind: "stream", chunks: ["a", "b"], gapMs: 30_000 });
      const started = performance.now();
      const events = await readSse(await slow.json("/v1/chat/completions?target_format=beta_messages", { model: "gpt-4o", stream: true, messages: hello }));
      // Within a second of the limit (test/chat/silence.test.ts times it on every path).
      expect(performance.now() - started).toBeLessThan(15_000);
      expect(events.at(-1)).toEqual({ event: "error", data: { type: "error", error: { type: "service_unavailable_error", message: expect.stringContaining("timed out") } } });
    } finally {
      await slow.stop();
    }
  }, 20_000);

});
