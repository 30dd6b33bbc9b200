/**
 * The Vertex front door (contract 23) with the requests Claude Code sends in Vertex mode (its
 * Anthropic Vertex client: the model in the URL, `anthropic_version` last in the body, a bearer):
 * to a vertex upstream the body as sent, to the Anthropic API and Bedrock as Anthropic's own body,
 * to OpenAI and the mock converted; answers and errors in Anthropic's dialect.
 */
import { afterAll, beforeEach, expect, test } from "bun:test";
import { TEST_KEY } from "../lib/app.ts";
import { readSse } from "../lib/gateway.ts";
import { startGoogleGateway } from "../lib/google-gateway.ts";

const ROUTES = `
[[routes]]
match = "claude-opus-*"
to = ["vtx"]

[[routes]]
match = "claude-3-7-*"
to = ["beta"]
`;
const gateway = await startGoogleGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0" }, ROUTES);
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());
const base = gateway.listen();
const AT = "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models";

/** A body as Claude Code's Vertex client writes it: `anthropic_version` added after the rest. */
const claudeCode = (stream: boolean) => ({
  max_tokens: 200, system: [{ type: "text", text: "You are Claude Code." }], messages: [{ role: "user", content: "Say hi" }],
  tools: [{ name: "Bash", description: "Run a command", input_schema: { type: "object", properties: { command: { type: "string" } } } }],
  ...(stream ? { stream: true } : {}), anthropic_version: "vertex-2023-10-16",
});
// The beta goes only where it is kept: one Bedrock drops is counted process-wide (parley_betas_dropped_total), which other files read.
const predict = (model: string, stream: boolean, body: unknown = claudeCode(stream), key = TEST_KEY, beta = model.startsWith("claude-opus")) =>
  fetch(`${base}${AT}/${encodeURIComponent(model)}:${stream ? "streamRawPredict" : "rawPredict"}`, {
    method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(beta ? { "anthropic-beta": "interleaved-thinking-2025-05-14" } : {}) }, body: JSON.stringify(body),
  });
const text = (events: { data: unknown }[]) => events.map((e: any) => e.data?.delta?.text ?? "").join("");

test("to a vertex upstream: the body as sent, under Vertex's id, and the answer as Vertex gave it", async () => {
  const answer = await predict("claude-opus-4-1@20250805", false);
  expect(answer.status).toBe(200);
  expect(answer.headers.get("x-parley-upstream")).toBe("vtx");
  expect((await answer.json()).content[0].type).toBe("text");
  const sent = gateway.vertex.claude.last();
  expect(sent.model).toBe("claude-opus-4-1@20250805");
  expect(sent.body).toEqual(claudeCode(false));
  expect(sent.headers.get("anthropic-beta")).toBe("interleaved-thinking-2025-05-14");
});

test("to a vertex upstream, streamed: every event relayed", async () => {
  const response = await predict("claude-opus-4-1@20250805", true);
  const events = await readSse(response);
  expect(events[0]!.event).toBe("message_start");
  expect(events.at(-1)!.event).toBe("message_stop");
  expect(gateway.vertex.claude.last().method).toBe("streamRawPredict");
});

test("to the Anthropic API: Anthropic's own body (model in, anthropic_version out), lossless", async () => {
  const answer = await predict("claude-sonnet-4-5@20250929", false);
  expect(answer.status).toBe(200);
  expect(answer.headers.get("x-parley-upstream")).toBe("anthropic");
  expect((await answer.json()).content[0].text).toBe("Hello from Anthropic");
  const { anthropic_version: _, ...rest } = claudeCode(false);
  expect(gateway.anthropic.last().body).toEqual({ model: "claude-sonnet-4-5-20250929", ...rest });
  const events = await readSse(await predict("claude-sonnet-4-5@20250929", true));
  expect(text(events)).toBe("Hello from Anthropic");
});

test("to Claude on Bedrock: InvokeModel's body", async () => {
  const answer = await predict("claude-3-7-sonnet@20250219", false);
  expect(answer.status).toBe(200);
  expect(answer.headers.get("x-parley-upstream")).toBe("beta");
  const sent = gateway.bedrock.last();
  expect(sent.modelId).toContain("anthropic.claude-3-7-sonnet-20250219");
  expect(sent.body.anthropic_version).toBe("bedrock-2023-05-31");
  expect(sent.body.tools[0].name).toBe("Bash");
});

test.each([["an OpenAI upstream", "gpt-4o", "Hello from OpenAI"], ["the mock", "mock", "Say hi"]])("to %s: converted, answered as Anthropic answers", async (_name, model, expected) => {
  const answer = await (await predict(model, false)).json();
  expect(answer.type).toBe("message");
  expect(answer.content[0].text).toBe(expected);
  expect(text(await readSse(await predict(model, true)))).toBe(expected);
});

test("count-tokens:rawPredict: Vertex's count on a vertex upstream, Anthropic's on the Anthropic API", async () => {
  const count = (model: string) =>
    fetch(`${base}${AT}/count-tokens:rawPredict`, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}` }, body: JSON.stringify({ model, messages: [{ role: "user", content: "Count me" }], anthropic_version: "vertex-2023-10-16" }) });
  const vertex = await count("claude-opus-4-1@20250805");
  expect(vertex.status).toBe(200);
  expect((await vertex.json()).input_tokens).toBeGreaterThan(0);
  expect(gateway.vertex.claude.last()).toMatchObject({ model: "count-tokens", body: { model: "claude-opus-4-1@20250805" } });
  const anthropic = await count("claude-sonnet-4-5@20250929");
  expect(anthropic.headers.get("x-parley-token-count")).toBeNull();
  expect(gateway.anthropic.last().body.anthropic_version).toBeUndefined();
});

test("errors in Anthropic's envelope: an unknown model, a wrong key, an upstream's refusal", async () => {
  const unknown = await predict("nope-1", false);
  expect(unknown.status).toBe(404);
  expect(await unknown.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
  const wrong = await predict("claude-opus-4-1@20250805", false, undefined, "wrong-key");
  expect(wrong.status).toBe(401);
  expect((await wrong.json()).error.type).toBe("authentication_error");
  gateway.vertex.claude.next({ kind: "error", status: 400, type: "invalid_request_error", message: "messages: at least one message is required" });
  const refused = await predict("claude-opus-4-1@20250805", false);
  expect(refused.status).toBe(400);
  expect((await refused.json()).error).toEqual({ type: "invalid_request_error", message: "messages: at least one message is required" });
});
