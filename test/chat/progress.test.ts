import { afterAll, beforeEach, expect, test } from "bun:test";
import { startGateway } from "../lib/gateway.ts";

// x-parley-progress: 1 (parley's chat asks for it) makes a retried stream say what it waits for;
// without it, or when the first call succeeds, the answer is what it always was.
const CLAUDE = "anthropic.claude-3-5-sonnet-20241022-v2:0";
const gateway = await startGateway({ UPSTREAM_RETRIES: "2" });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const hello = [{ role: "user", content: "hi" }];
const PROGRESS = { "x-parley-progress": "1" };
const chat = (body: object, headers: Record<string, string> = {}) => gateway.json("/v1/chat/completions", { messages: hello, stream: true, ...body }, { headers });
const slowDown = { kind: "error" as const, status: 429, message: "slow down", headers: { "retry-after": "1" } };
// Ids and timestamps differ from one reply to the next; nothing else may.
const same = (text: string) => text.replace(/chatcmpl-[\w-]+/g, "ID").replace(/"created":\d+/g, '"created":0');

test("a retried stream, asked with the header: comments with attempt, wait and Retry-After come first, then the reply", async () => {
  gateway.openai.next(slowDown);
  const response = await chat({ model: "gpt-4o" }, PROGRESS);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  const text = await response.text();
  expect(text).toMatch(/^: retry attempt=2 of=3 wait_ms=1000 status=429 retry_after=1\n\n/);
  expect(text).toContain(`"content":" OpenAI"`);
  expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
});

test("the head goes out before the retry's wait ends", async () => {
  gateway.openai.next({ ...slowDown, headers: { "retry-after": "5" } });
  const started = performance.now();
  const response = await chat({ model: "gpt-4o" }, PROGRESS);
  const reader = response.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  // The retry waits 5 s: the comment is here long before (a generous bound for a busy machine).
  expect(performance.now() - started).toBeLessThan(4500);
  expect(first).toContain(": retry attempt=2 of=3 wait_ms=5000 status=429 retry_after=5");
  await reader.cancel();
}, 20_000);

test("converted streams too; a final failure comes as an error event with its status", async () => {
  gateway.bedrock.next({ kind: "error", status: 503, type: "ServiceUnavailableException", message: "busy" });
  const converted = await (await chat({ model: CLAUDE }, PROGRESS)).text();
  expect(converted).toMatch(/^: retry attempt=2 of=3 wait_ms=\d+ status=503\n\n/);
  expect(converted.trimEnd().endsWith("data: [DONE]")).toBe(true);

  for (let i = 0; i < 3; i++) gateway.openai.next({ kind: "error", status: 500, message: "boom" });
  const failed = await chat({ model: "gpt-4o" }, PROGRESS);
  expect(failed.status).toBe(200);
  const text = await failed.text();
  expect(text.match(/^: retry /gm)?.length).toBe(2);
  expect(text).toMatch(/data: \{"error":\{"type":"service_unavailable_error","message":"[^"]*","status":503\}\}\n\n$/);
});

test("without the header, and with it when the first call succeeds, the answer is byte for byte the usual one", async () => {
  gateway.openai.next(slowDown);
  const retried = await chat({ model: "gpt-4o" });
  expect(retried.headers.get("x-parley-attempts")).toBe("2");
  const plain = await (await chat({ model: "gpt-4o" })).text();
  const asked = await chat({ model: "gpt-4o" }, PROGRESS);
  expect(asked.headers.get("x-parley-attempts")).toBe("1");
  expect(same(await asked.text())).toBe(same(plain));
  expect(same(await retried.text())).toBe(same(plain));

  for (let i = 0; i < 3; i++) gateway.openai.next({ kind: "error", status: 500, message: "boom" });
  const failed = await chat({ model: "gpt-4o" });
  expect(failed.status).toBe(503);
  expect((await failed.json()).error.type).toBe("service_unavailable_error");

  // Not a stream: no progress, whatever the header says.
  gateway.openai.next(slowDown);
  const json = await chat({ model: "gpt-4o", stream: false }, PROGRESS);
  expect(json.headers.get("content-type")).toContain("application/json");
  expect((await json.json()).choices[0].message.content).toBe("Hello from OpenAI");
});

test("an early answer's request log line says how the request ended and where it went, not the 200 it started with", async () => {
  const { startFakeOpenAI } = await import("../lib/fake-openai.ts");
  const { testConfig, TEST_KEY } = await import("../lib/app.ts");
  const { createApp } = await import("../../src/server/app.ts");
  const { createLogger } = await import("../../src/log.ts");
  const openai = await startFakeOpenAI();
  try {
    const config = testConfig({ ALPHA_BASE_URL: openai.url, ALPHA_API_KEY: "sk-x", UPSTREAM_RETRIES: "2", RATE_LIMIT_RPM: "0" });
    const lines: { status: number; attempts?: number; provider?: string }[] = [];
    const app = createApp({ config, log: createLogger("silent"), accessLog: (e) => lines.push(e) });
    for (let i = 0; i < 3; i++) openai.next({ kind: "error", status: 500, message: "boom" });
    const response = await app.handle(new Request("http://x/v1/chat/completions", { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", ...PROGRESS }, body: JSON.stringify({ model: "gpt-4o", stream: true, messages: hello }) }));
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"status":503');
    expect(lines).toEqual([expect.objectContaining({ status: 503, attempts: 3, provider: "alpha" })]);
    await app.close();
  } finally {
    openai.stop();
  }
});
