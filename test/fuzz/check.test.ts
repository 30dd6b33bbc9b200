import { describe, expect, test } from "bun:test";
import type { FuzzCase } from "./cases.ts";
import { check, streamProblems } from "./check.ts";

/** The fuzz's own checks must be able to fail: each rule against an answer that breaks it. */

const base: FuzzCase = { id: 0, endpoint: "chat", label: "", method: "POST", path: "/v1/chat/completions", headers: [], dialect: "parley", reply: "alpha", faulty: false };
const json = (body: unknown, status = 400, headers: Record<string, string> = { "x-request-id": "r1" }) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
const problems = async (response: Response, c: Partial<FuzzCase> = {}, secrets: string[] = []) => (await check({ ...base, ...c }, response, secrets, 1000)).problems;
const envelope = { error: { type: "invalid_request_error", message: "bad" } };

describe("fuzz checks", () => {
  test("a proper error passes", async () => {
    expect(await problems(json(envelope))).toEqual([]);
  });

  test("500, missing request id, foreign envelope, secret", async () => {
    expect(await problems(json({ error: { type: "internal_server_error", message: "x" } }, 500))).toContain("status 500");
    expect(await problems(json(envelope, 400, {}))).toContain("no x-request-id header");
    expect((await problems(json({ message: "oops" }))).join()).toContain("not parley's envelope");
    expect((await problems(json(envelope), { dialect: "anthropic" })).join()).toContain("not Anthropic's envelope");
    expect((await problems(json({ error: { type: "x", message: "y" } }), { dialect: "openai" })).join()).toContain("not OpenAI's envelope");
    expect((await problems(json({ error: { type: "invalid_request_error", message: "key sk-secret-1" } }), {}, ["sk-secret-1"])).join()).toContain("secret");
    expect((await problems(new Response("<html>", { status: 404, headers: { "x-request-id": "r" } }))).join()).toContain("not JSON");
  });

  test("a 5xx for a healthy upstream, a refused valid request, a garbage 200", async () => {
    expect((await problems(json({ error: { type: "service_unavailable_error", message: "x" } }, 503))).join()).toContain("healthy");
    expect(await problems(json({ error: { type: "service_unavailable_error", message: "x" } }, 503), { faulty: true })).toEqual([]);
    expect((await problems(json(envelope), { valid: true })).join()).toContain("valid request was refused");
    expect((await problems(json({ choices: "x" }, 200))).join()).toContain("wrong shape");
  });

  test("streams must end in their dialect", () => {
    expect(streamProblems("alpha", 'data: {"a":1}\n\ndata: [DONE]\n\n')).toEqual([]);
    expect(streamProblems("alpha", 'data: {"a":1}\n\ndata: {"error":{"type":"x","message":"y"}}\n\n')).toEqual([]);
    expect(streamProblems("alpha", 'data: {"a":1}\n\n').join()).toContain("without its last event");
    expect(streamProblems("beta_messages", 'event: message_stop\ndata: {"type":"message_stop"}\n\n')).toEqual([]);
    expect(streamProblems("beta_messages", 'event: content_block_delta\ndata: {"type":"content_block_delta"}\n\n').join()).toContain("without");
    expect(streamProblems("beta_textgen", 'data: {"outputText":"","completionReason":"FINISH"}\n\n')).toEqual([]);
    expect(streamProblems("beta_textgen", 'data: {"outputText":"a","completionReason":null}\n\n').join()).toContain("without");
    expect(streamProblems("alpha", "data: {not json\n\ndata: [DONE]\n\n").join()).toContain("not JSON");
    expect(streamProblems("alpha", "data: {not json\n\ndata: [DONE]\n\n", true)).toEqual([]);
  });

  test("a body that never ends is a hang", async () => {
    const stalled = new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode("data: {}\n\n")) }), { headers: { "content-type": "text/event-stream", "x-request-id": "r" } });
    expect((await check(base, stalled, [], 100)).problems.join()).toContain("hang");
  });
});
