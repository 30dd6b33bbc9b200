import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { GatewayError } from "../../src/errors.ts";
import type { ChatRequest, StreamEvent } from "../../src/ir.ts";
import type { Upstream } from "../../src/providers/kind.ts";
import { vertexKind } from "../../src/providers/vertex/kind.ts";
import { fromVertexId, toVertexId } from "../../src/providers/vertex/model-ids.ts";
import type { createVertexProvider } from "../../src/providers/vertex/provider.ts";
import type { VertexSettings } from "../../src/providers/vertex/settings.ts";
import { messageEvents } from "../lib/fake-anthropic.ts";
import { reply } from "../lib/fake-gemini.ts";
import { FAKE_PROJECT, startFakeVertex } from "../lib/fake-vertex.ts";

/** Contract 23: Claude and Gemini on one Vertex upstream, against a fake Vertex, the provider called directly. */
const fake = await startFakeVertex();
afterAll(() => fake.stop());
beforeEach(() => fake.reset());

const upstream: Upstream<VertexSettings> = {
  name: "vertex", kind: "vertex" as never,
  settings: vertexKind.settings({ project: FAKE_PROJECT, region: "us-east5", base_url: `${fake.url}/v1`, access_token: "ya29.static-token" }),
  discover: false, timeoutMs: 5000, retries: 0, headers: {}, origin: {},
};
const vertex = (await vertexKind.build(upstream)) as ReturnType<typeof createVertexProvider>;
const signal = new AbortController().signal;
const CLAUDE = "claude-sonnet-4-5@20250929";
const ask = (text: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  system: ["Be brief."], messages: [{ role: "user", content: [{ type: "text", text }] }], maxTokens: 200, stream: false, includeUsage: true, fileIds: [], ...extra,
});
const collect = async (events: AsyncIterable<StreamEvent>) => {
  const all: StreamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
};

describe("where Vertex is, and its names of Claude", () => {
  test("the region's host, global's own, and base_url", () => {
    expect(vertexKind.where(vertexKind.settings({ project: "p", region: "europe-west1" }))).toBe("https://europe-west1-aiplatform.googleapis.com (p, europe-west1)");
    expect(vertexKind.where(vertexKind.settings({ project: "p", region: "global" }))).toBe("https://aiplatform.googleapis.com (p, global)");
    expect(vertexKind.where(vertexKind.settings({ project: "p" }))).toBe("https://aiplatform.googleapis.com (p, global)");
  });

  test("Anthropic's names <-> Vertex's `@` ids", () => {
    expect(toVertexId("claude-sonnet-4-5-20250929")).toBe("claude-sonnet-4-5@20250929");
    expect(toVertexId("claude-sonnet-4-5")).toBe("claude-sonnet-4-5@20250929");
    expect(toVertexId("claude-opus-4-0")).toBe("claude-opus-4@20250514");
    expect(toVertexId("claude-3-5-sonnet-20241022")).toBe("claude-3-5-sonnet-v2@20241022");
    expect(toVertexId("claude-opus-4-6")).toBe("claude-opus-4-6");
    expect(fromVertexId("claude-haiku-4-5@20251001")).toBe("claude-haiku-4-5-20251001");
    expect(fromVertexId("claude-3-5-sonnet-v2@20241022")).toBe("claude-3-5-sonnet-20241022");
    expect(fromVertexId("gemini-2.5-pro")).toBe("gemini-2.5-pro");
    expect(vertexKind.modelFor!("claude-haiku-4-5", upstream.settings)).toBe("claude-haiku-4-5@20251001");
    expect(vertexKind.modelFor!("gemini-2.5-pro", upstream.settings)).toBe("gemini-2.5-pro");
  });
});

describe("Claude on Vertex", () => {
  test("through the IR: rawPredict with Vertex's anthropic_version and no model; usage as Anthropic counts it", async () => {
    const answer = await vertex.complete(ask("Hi"), CLAUDE, signal);
    expect(answer.content).toEqual([{ type: "text", text: "Hello from Anthropic" }]);
    expect(answer.usage).toEqual({ input: { total: 21 + 2048, cacheRead: 2048, cacheWrite: 0 }, output: 6 });
    const sent = fake.claude.last();
    expect(sent).toMatchObject({ model: CLAUDE, method: "rawPredict", project: FAKE_PROJECT, region: "us-east5" });
    expect(sent.headers.get("authorization")).toBe("Bearer ya29.static-token");
    expect(sent.body).toEqual({ anthropic_version: "vertex-2023-10-16", max_tokens: 200, system: "Be brief.", messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }] });
  });

  test("a stream through streamRawPredict", async () => {
    const events = await collect(vertex.stream(ask("Hi", { stream: true }), CLAUDE, signal));
    expect(fake.claude.last()).toMatchObject({ method: "streamRawPredict", body: { stream: true } });
    expect(events.filter((e) => e.type === "text").map((e) => (e as { text: string }).text).join("")).toBe("Hello from Anthropic");
    expect(events.find((e) => e.type === "finish")).toMatchObject({ finish: { reason: "stop", raw: "end_turn" } });
  });

  test("an Anthropic client's body: model out, version in, every other byte as sent; the reply names the client's id", async () => {
    const body = `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"Hi"}],"temperature":0.10000000000000001,"metadata":{"user_id":"u1"}}`;
    const headers = new Headers({ "anthropic-beta": "interleaved-thinking-2025-05-14" });
    const answer = await vertex.native!["anthropic-messages"]!({ body, model: CLAUDE, requested: "claude-sonnet-4-5", stream: false, signal, headers });
    const sent = fake.claude.last();
    expect(sent.raw).toBe(`{"anthropic_version":"vertex-2023-10-16","max_tokens":1024,"messages":[{"role":"user","content":"Hi"}],"temperature":0.10000000000000001,"metadata":{"user_id":"u1"}}`);
    expect(sent.headers.get("anthropic-beta")).toBe("interleaved-thinking-2025-05-14");
    expect(answer.kind).toBe("json");
    if (answer.kind === "json") expect(JSON.parse(answer.body as string).model).toBe("claude-sonnet-4-5");
    expect(vertex.takesNative!("anthropic-messages", CLAUDE)).toBe(true);
    expect(vertex.takesNative!("anthropic-messages", "gemini-2.5-pro")).toBe(false);
  });

  test("an Anthropic client's stream: relayed as sent, message_start naming the client's id, its input read", async () => {
    const events = messageEvents("claude-sonnet-4-5-20250929", ["Hel", "lo"]);
    fake.claude.next({ kind: "stream", events });
    const body = `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"Hi"}],"stream":true}`;
    const answer = await vertex.native!["anthropic-messages"]!({ body, model: CLAUDE, requested: "claude-sonnet-4-5", stream: true, signal });
    expect(fake.claude.last()).toMatchObject({ method: "streamRawPredict", body: { stream: true } });
    if (answer.kind !== "stream") throw new Error("not a stream");
    let text = "";
    const reader = answer.body as AsyncIterator<Uint8Array>;
    for (let read = await reader.next(); !read.done; read = await reader.next()) text += new TextDecoder().decode(read.value);
    const sent = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    expect(text.slice(text.indexOf("\n\n") + 2)).toBe(sent.slice(1).join(""));
    expect(JSON.parse(text.slice(text.indexOf("data: ") + 6, text.indexOf("\n\n"))).message.model).toBe("claude-sonnet-4-5");
    expect(answer.input!()).toEqual({ total: 21 + 100 + 2048, cacheRead: 2048, cacheWrite: 100 });
  });

  test("count-tokens:rawPredict takes the body with its model", async () => {
    const body = `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"Hello"}]}`;
    const tokens = await vertex.countTokens!["anthropic-messages"]!({ body, model: CLAUDE, requested: "claude-sonnet-4-5", stream: false, signal });
    const sent = fake.claude.last();
    expect(sent).toMatchObject({ model: "count-tokens", method: "rawPredict", body: { model: CLAUDE } });
    expect(tokens).toBe(9 + (sent.raw.length % 40));
  });

  test("errors: Anthropic's words kept for an Anthropic client; 529 retryable; 400 not", async () => {
    fake.claude.next({ kind: "error", status: 529, type: "overloaded_error", message: "Overloaded" });
    expect(await vertex.complete(ask("Hi"), CLAUDE, signal).catch((e) => e)).toMatchObject({ retryable: true });
    fake.claude.next({ kind: "error", status: 400, type: "invalid_request_error", message: "max_tokens: too large" });
    const body = `{"model":"x","max_tokens":1,"messages":[{"role":"user","content":"Hi"}]}`;
    const error = await vertex.native!["anthropic-messages"]!({ body, model: CLAUDE, requested: "x", stream: false, signal }).catch((e) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, message: "max_tokens: too large", retryable: false, anthropicType: "invalid_request_error" });
  });
});

describe("Gemini on Vertex", () => {
  test("generateContent under publishers/google, with the one Gemini wire module", async () => {
    const answer = await vertex.complete(ask("Hi"), "gemini-2.5-pro", signal);
    expect(answer.content).toEqual([{ type: "text", text: "Hello from Gemini" }]);
    expect(answer.usage).toEqual({ input: { total: 120, cacheRead: 100, cacheWrite: 0 }, output: 12 });
    expect(fake.gemini.last()).toMatchObject({ path: `/v1/projects/${FAKE_PROJECT}/locations/us-east5/publishers/google/models/gemini-2.5-pro:generateContent` });
  });

  test("a stream with alt=sse", async () => {
    const events = await collect(vertex.stream(ask("Hi", { stream: true }), "gemini-2.5-pro", signal));
    expect(fake.gemini.last()).toMatchObject({ method: "streamGenerateContent", search: "?alt=sse" });
    expect(events.filter((e) => e.type === "text").map((e) => (e as { text: string }).text).join("")).toBe("Hello from Gemini");
  });

  test("a tool call's signature goes back on the next turn", async () => {
    fake.gemini.next({ kind: "json", body: reply([{ functionCall: { name: "lookup", args: { q: "x" } } }], "STOP", "gemini-3-pro-preview") });
    const tools = [{ name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } }];
    const first = await vertex.complete(ask("Look up x", { tools }), "gemini-3-pro-preview", signal);
    const call = first.content.find((p) => p.type === "tool_call")!;
    await vertex.complete({ ...ask("Look up x", { tools }), messages: [
      { role: "user", content: [{ type: "text", text: "Look up x" }] },
      { role: "assistant", content: [call] },
      { role: "user", content: [{ type: "tool_result", toolCallId: (call as { id: string }).id, content: "found" }] },
    ] }, "gemini-3-pro-preview", signal);
    expect(fake.gemini.last().body.contents[1].parts[0].thoughtSignature).toBe(fake.signatures.get('lookup:{"q":"x"}'));
  });

  test("countTokens takes the request's fields at the top", async () => {
    const tokens = await vertex.gemini.count(ask("Hi"), "gemini-2.5-pro", signal);
    expect(fake.gemini.last().body).toMatchObject({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] });
    expect(fake.gemini.last().body.generateContentRequest).toBeUndefined();
    expect(tokens).toBeGreaterThan(0);
  });

  test("embeddings through :predict, the tokens counted per text", async () => {
    const result = await vertex.embed!({ texts: ["one", "three"], tokens: false, dimensions: 2 }, "gemini-embedding-001", signal);
    expect(result).toEqual({ vectors: [[0.3, 1.3], [0.5, 1.5]], inputTokens: 8 });
  });

  test("a 429 is retryable; a 401 drops the token so the next call asks again", async () => {
    fake.gemini.next({ kind: "error", status: 429, message: "Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute_per_project_per_base_model" });
    expect(await vertex.complete(ask("Hi"), "gemini-2.5-pro", signal).catch((e) => e)).toMatchObject({ status: 429, retryable: true });
    const expired = (await vertexKind.build({ ...upstream, settings: { ...upstream.settings, accessToken: "ya29.expired" } })) as ReturnType<typeof createVertexProvider>;
    expect(await expired.complete(ask("Hi"), "gemini-2.5-pro", signal).catch((e) => e)).toMatchObject({ status: 502 });
  });
});
