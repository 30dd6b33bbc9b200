import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { backoff } from "../../src/core/backoff.ts";
import { GatewayError } from "../../src/errors.ts";
import { testApp } from "../lib/app.ts";
import { anthropicEvents } from "../lib/fake-bedrock.ts";
import { startFaultyUpstream } from "../lib/faulty-upstream.ts";
import { readSse, startGateway, TEST_KEY } from "../lib/gateway.ts";

const CLAUDE = "anthropic.claude-3-5-sonnet-20241022-v2:0";
const hello = [{ role: "user", content: "hi" }];
const gateway = await startGateway({ MODEL_FALLBACKS: `gpt-4o=${CLAUDE},gpt-4.1=gpt-4o-mini|${CLAUDE}` });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const chat = (body: object, query = "") => gateway.json(`/v1/chat/completions${query}`, body);
const messages = (body: object) => gateway.json("/v1/messages", body, { headers: { "anthropic-version": "2023-06-01" } });
const overloaded = { kind: "error" as const, status: 503, message: "overloaded" };

describe("retries before the first byte (contract 10)", () => {
  test("a 429 with Retry-After is waited out and retried; the reply says how many calls it took", async () => {
    gateway.openai.next({ kind: "error", status: 429, message: "slow down", headers: { "retry-after": "1" } });
    const started = performance.now();
    const response = await chat({ model: "gpt-4o", messages: hello });
    expect(response.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(response.headers.get("x-parley-attempts")).toBe("2");
    expect(response.headers.get("x-parley-model")).toBe("gpt-4o");
    expect(gateway.openai.received.length).toBe(2);
  });

  test("a 503 then a success: the client sees only the success, converted paths and streams too", async () => {
    gateway.openai.next(overloaded);
    const converted = await chat({ model: "gpt-4o", messages: hello }, "?target_format=beta_messages");
    expect((await converted.json()).content[0].text).toBe("Hello from OpenAI");
    gateway.bedrock.next({ kind: "error", status: 503, type: "ServiceUnavailableException", message: "busy" });
    const stream = await chat({ model: CLAUDE, messages: hello, stream: true });
    const events = await readSse(stream);
    expect(stream.headers.get("x-parley-attempts")).toBe("2");
    expect(events.at(-1)!.data).toBe("[DONE]");
  });

  test("a same-family stream that Bedrock throttles in its first frame is retried: Claude Code's /v1/messages", async () => {
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(["one"]), exceptionAfter: 0, exception: "throttlingException" });
    const response = await messages({ model: CLAUDE, max_tokens: 50, stream: true, messages: hello });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-parley-attempts")).toBe("2");
    const events = await readSse(response);
    expect(events.map((e) => e.event)).not.toContain("error");
    expect(events.at(-1)!.event).toBe("message_stop");
    expect(gateway.bedrock.received.length).toBe(2);
  });

  test("throttled in the first frame on every try: a 429 in the caller's envelope, not a 200 with an error event", async () => {
    const throttled = { kind: "stream" as const, events: anthropicEvents(["one"]), exceptionAfter: 0, exception: "throttlingException" };
    gateway.bedrock.next(throttled, throttled, throttled);
    const response = await messages({ model: CLAUDE, max_tokens: 50, stream: true, messages: hello });
    expect(response.status).toBe(429);
    expect(response.headers.get("x-parley-attempts")).toBe("3");
    expect(await response.json()).toEqual({ type: "error", error: { type: "rate_limit_error", message: expect.any(String) } });
  });

  test("a passthrough stream that ends before its first byte is retried", async () => {
    gateway.openai.next({ kind: "stream", endAfter: 0 });
    const response = await chat({ model: "gpt-4o", messages: hello, stream: true });
    expect({ status: response.status, attempts: response.headers.get("x-parley-attempts") }).toEqual({ status: 200, attempts: "2" });
    expect((await readSse(response)).at(-1)!.data).toBe("[DONE]");
  });

  test("a stream whose upstream answers 200 and drops before its first byte: retried, then the error in the caller's envelope", async () => {
    const upstream = await startFaultyUpstream();
    const app = testApp({
      ALPHA_API_KEY: "sk-x", ALPHA_BASE_URL: upstream.openaiUrl, BETA_ENDPOINT_URL: upstream.bedrockUrl,
      BETA_REGION: "us-east-1", BETA_ACCESS_KEY_ID: "AKIAX", BETA_SECRET_ACCESS_KEY: "x",
    });
    try {
      const calls = [
        app.json("/v1/chat/completions", { model: "gpt-fault-reset-before-body", messages: hello, stream: true }),
        app.json("/v1/messages", { model: "anthropic.fault-reset-before-body", max_tokens: 5, messages: hello, stream: true }, { headers: { "anthropic-version": "2023-06-01" } }),
      ];
      const [passed, messages] = await Promise.all(calls);
      expect({ status: passed!.status, attempts: passed!.headers.get("x-parley-attempts") }).toEqual({ status: 503, attempts: "3" });
      expect((await passed!.json()).error.type).toBe("service_unavailable_error");
      expect({ status: messages!.status, attempts: messages!.headers.get("x-parley-attempts") }).toEqual({ status: 503, attempts: "3" });
      expect(await messages!.json()).toEqual({ type: "error", error: { type: "api_error", message: expect.any(String) } });
      expect(upstream.seen.byFault.get("reset-before-body")).toBe(6);
    } finally {
      upstream.stop();
    }
  });

  test("a reset mid-body of a whole reply is retried", async () => {
    gateway.openai.next({ kind: "reset", bytes: '{"id":"chatcmpl-x","choi' });
    const response = await chat({ model: "gpt-4o", messages: hello });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-parley-attempts")).toBe("2");
  });

  test("retries run out: the last error, with the number of calls", async () => {
    gateway.openai.next(overloaded, overloaded, overloaded);
    const response = await chat({ model: "gpt-4o-mini", messages: hello });
    expect(response.status).toBe(503);
    expect(response.headers.get("x-parley-attempts")).toBe("3");
    expect(gateway.openai.received.length).toBe(3);
  });

  test("errors about the request are never retried", async () => {
    for (const status of [400, 401, 403, 404, 413, 422]) {
      gateway.reset();
      gateway.openai.next({ kind: "error", status, message: "no" });
      await chat({ model: "gpt-4o-mini", messages: hello });
      expect({ status, calls: gateway.openai.received.length }).toEqual({ status, calls: 1 });
    }
  });

  test("the client leaving during a backoff ends the wait and the retries at once", async () => {
    gateway.openai.next({ kind: "error", status: 429, message: "slow down", headers: { "retry-after": "3" } });
    const base = gateway.listen();
    const client = new AbortController();
    const call = fetch(`${base}/v1/chat/completions`, {
      method: "POST", signal: client.signal,
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: hello }),
    }).catch((error) => error);
    while (gateway.openai.received.length === 0) await Bun.sleep(10); // the first call is in; its 429 starts the backoff
    client.abort();
    await call;
    await Bun.sleep(3500);
    expect(gateway.openai.received.length).toBe(1);
  });

  test("a Retry-After beyond the 8 s cap is not waited out: the client gets the 429 and the upstream's Retry-After at once", async () => {
    gateway.openai.next({ kind: "error", status: 429, message: "slow down", headers: { "retry-after": "53" } });
    const started = performance.now();
    const response = await chat({ model: "gpt-4o-mini", messages: hello });
    expect(performance.now() - started).toBeLessThan(5000);
    expect({ status: response.status, retryAfter: response.headers.get("retry-after"), attempts: response.headers.get("x-parley-attempts") }).toEqual({ status: 429, retryAfter: "53", attempts: "1" });
    expect(gateway.openai.received.length).toBe(1);
  });

  test("a Retry-After beyond the cap moves on to the fallback at once", async () => {
    gateway.openai.next({ kind: "error", status: 429, message: "slow down", headers: { "retry-after": "53" } });
    const started = performance.now();
    const response = await chat({ model: "gpt-4o", messages: hello });
    expect(performance.now() - started).toBeLessThan(5000);
    expect({ status: response.status, model: response.headers.get("x-parley-model"), attempts: response.headers.get("x-parley-attempts") }).toEqual({ status: 200, model: CLAUDE, attempts: "2" });
    expect(gateway.openai.received.length).toBe(1);
  });

  test("backoff: full jitter under the exponential bound, Retry-After honoured up to 8 s", () => {
    const plain = new GatewayError(503, "service_unavailable_error", "x");
    for (let i = 0; i < 50; i++) {
      expect(backoff(1, plain)).toBeLessThanOrEqual(250);
      expect(backoff(3, plain)).toBeLessThanOrEqual(1000);
      expect(backoff(10, plain)).toBeLessThanOrEqual(8000);
    }
    expect(backoff(1, new GatewayError(429, "rate_limit_error", "x", { retryAfter: 2 }))).toBe(2000);
    expect(backoff(1, new GatewayError(429, "rate_limit_error", "x", { retryAfter: 60 }))).toBe(8000);
  });
});

describe("MODEL_FALLBACKS", () => {
  test("OpenAI spent, Bedrock answers: the reply names the model asked for, the headers the one that answered", async () => {
    gateway.openai.next(overloaded, overloaded, overloaded);
    const response = await chat({ model: "gpt-4o", messages: hello });
    const body = await response.json();
    expect(response.status).toBe(200);
    expect(body.model).toBe("gpt-4o");
    expect(body.choices[0].message.content).toBe("Hello from Claude");
    expect(response.headers.get("x-parley-model")).toBe(CLAUDE);
    expect(response.headers.get("x-parley-attempts")).toBe("4");
    expect(gateway.bedrock.received.length).toBe(1);
  });

  test("fallbacks are tried in order; a stream falls back before its first byte", async () => {
    gateway.openai.next(overloaded, overloaded, overloaded, overloaded, overloaded, overloaded);
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(["Fallen", " back"]) });
    const response = await chat({ model: "gpt-4.1", messages: hello, stream: true });
    const events = await readSse(response);
    expect(events.slice(1, 3).map((e) => e.data.choices[0].delta.content)).toEqual(["Fallen", " back"]);
    expect(events[1]!.data.model).toBe("gpt-4.1");
    expect(gateway.openai.received.map((r) => r.body.model)).toEqual(["gpt-4.1", "gpt-4.1", "gpt-4.1", "gpt-4o-mini", "gpt-4o-mini", "gpt-4o-mini"]);
    expect(response.headers.get("x-parley-model")).toBe(CLAUDE);
  });

  test("a final error (400) does not fall back", async () => {
    gateway.openai.next({ kind: "error", status: 400, message: "bad request" });
    const response = await chat({ model: "gpt-4o", messages: hello });
    expect(response.status).toBe(400);
    expect(gateway.bedrock.received.length).toBe(0);
  });
});

describe("streams always end (contract 10)", () => {
  const tail = async (response: Response) => (await readSse(response)).at(-1)!;

  test("a passthrough stream whose upstream drops mid-way ends with an error event saying so", async () => {
    // The reset comes 500 ms after "a": time for a busy machine to pass "a" on first (a reset
    // drops what the gateway has not read yet, as a real one would).
    gateway.openai.next({ kind: "stream", chunks: ["a", "b", "c"], breakAfter: 2, gapMs: 500 });
    const response = await chat({ model: "gpt-4o", messages: hello, stream: true });
    const events = await readSse(response);
    expect(events[1]!.data.choices[0].delta.content).toBe("a");
    expect(events.at(-1)!.data.error).toEqual({ type: "service_unavailable_error", message: "OpenAI upstream dropped the connection in the middle of its reply." });
  });

  test("a passthrough stream cut short without [DONE] is not passed off as complete", async () => {
    gateway.openai.next({ kind: "stream", chunks: ["a", "b", "c"], endAfter: 3 });
    const last = await tail(await chat({ model: "gpt-4o", messages: hello, stream: true }));
    expect(last.data.error.message).toBe("OpenAI upstream's stream ended before the reply was complete.");
  });

  test("a converted stream that drops says dropped, not unreachable", async () => {
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(), breakAfter: 3, gapMs: 30 });
    const last = await tail(await chat({ model: CLAUDE, messages: hello, stream: true }));
    expect(last.data.error.message).toBe("AWS Bedrock dropped the connection in the middle of its reply.");
  });

  test("a corrupt event-stream frame ends the stream with an error naming it", async () => {
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(), corruptAfter: 2 });
    const events = await readSse(await chat({ model: CLAUDE, messages: hello, stream: true }, "?target_format=beta_messages"));
    expect(events.at(-1)).toMatchObject({ event: "error", data: { type: "error", error: { type: "service_unavailable_error" } } });
    expect(events.at(-1)!.data.error.message).toContain("broken event-stream frame");
  });
});

describe("upstream replies are checked at the boundary", () => {
  const bodies: [string, string, string?][] = [
    ["an HTML page", "<html><body>Bad gateway</body></html>", "text/html"],
    ["truncated JSON", '{"id":"chatcmpl-1","choices":[{"mess'],
    ["null", "null"],
    ["a wrong shape", '{"hello":"world"}'],
    ["a tool call without a name", JSON.stringify({ choices: [{ message: { role: "assistant", tool_calls: [{ id: "c1", type: "function", function: { arguments: "{}" } }] }, finish_reason: "tool_calls" }] })],
  ];
  for (const [name, body, contentType] of bodies) {
    for (const query of ["", "?target_format=beta_messages"]) {
      test(`OpenAI 200 with ${name}${query ? ", converted" : ", passthrough"}: 503 naming the upstream`, async () => {
        gateway.openai.next({ kind: "raw", body, contentType });
        const response = await chat({ model: "gpt-4o", messages: hello }, query);
        const error = (await response.json()).error;
        expect(response.status).toBe(503);
        expect(error.type).toBe("service_unavailable_error");
        expect(error.message).toStartWith("OpenAI upstream sent a reply parley cannot read");
      });
    }
  }

  for (const [name, body] of [["null", "null"], ["no content", '{"id":"msg_1","type":"message"}'], ["a tool_use without a name", '{"content":[{"type":"tool_use","id":"t1","input":{}}]}']]) {
    test(`Bedrock 200 with ${name}: 503 naming Bedrock`, async () => {
      gateway.bedrock.next({ kind: "raw", body: body! });
      const response = await chat({ model: CLAUDE, messages: hello });
      expect(response.status).toBe(503);
      expect((await response.json()).error.message).toStartWith("AWS Bedrock sent a reply parley cannot read");
    });
  }

  test("a streamed tool call without a name ends the stream with an error, never a broken block", async () => {
    gateway.openai.next({ kind: "stream", chunks: [], toolCalls: [{ id: "c1", name: "", arguments: ["{}"] }] });
    const events = await readSse(await chat({ model: "gpt-4o", messages: hello, stream: true }, "?target_format=beta_messages"));
    expect(events.some((e) => e.data.content_block?.type === "tool_use")).toBe(false);
    expect(events.at(-1)!.event).toBe("error");
  });
});

describe("tool_choice none and turn order", () => {
  const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }];
  const history = [
    { role: "user", content: "look it up" },
    { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "lookup", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "t1", content: "42" },
  ];

  test("to Claude, none keeps the tools and says {type: none}", async () => {
    await chat({ model: CLAUDE, messages: history, tools, tool_choice: "none" });
    const sent = gateway.bedrock.last().body;
    expect(sent.tool_choice).toEqual({ type: "none" });
    expect(sent.tools.map((t: { name: string }) => t.name)).toEqual(["lookup"]);
  });

  test("to Converse, none sends no tools and tells the tool history as text", async () => {
    await chat({ model: "meta.llama3-1-70b-instruct-v1:0", messages: history, tools, tool_choice: "none" });
    const sent = gateway.bedrock.last().body;
    expect(sent.toolConfig).toBeUndefined();
    expect(JSON.stringify(sent.messages)).not.toContain("toolUse");
    expect(sent.messages[1].content[0].text).toContain("[called tool lookup");
  });

  test("to Converse, two user turns in a row become one", async () => {
    await chat({ model: "meta.llama3-1-70b-instruct-v1:0", messages: [{ role: "user", content: "one" }, { role: "user", content: "two" }] });
    expect(gateway.bedrock.last().body.messages).toEqual([{ role: "user", content: [{ text: "one" }, { text: "two" }] }]);
  });
});

describe("client- and upstream-given names never reach Object.prototype", () => {
  for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
    test(`target_format=${name} is a 400 listing the allowed values`, async () => {
      const response = await chat({ model: "gpt-4o", messages: hello }, `?target_format=${name}`);
      expect(response.status).toBe(400);
      expect((await response.json()).error.details).toContain("beta_messages");
    });
    test(`model ${name} is a 404 that says how to route it`, async () => {
      const response = await chat({ model: name, messages: hello });
      expect(response.status).toBe(404);
      expect((await response.json()).error.message).toContain("MODEL_ROUTES");
    });
  }

  test("an upstream finish reason named like a prototype key is just 'other'", async () => {
    gateway.openai.next({ kind: "reply", finish: "constructor" });
    const response = await chat({ model: "gpt-4o", messages: hello }, "?target_format=beta_messages");
    expect((await response.json()).stop_reason).toBe("end_turn");
  });
});

describe("the request log tells what happened", async () => {
  const { createApp } = await import("../../src/server/app.ts");
  const { createLogger } = await import("../../src/log.ts");
  const { testConfig } = await import("../lib/app.ts");
  const entries: import("../../src/server/access-log.ts").AccessEntry[] = [];
  const config = testConfig({ ALPHA_API_KEY: "sk-upstream-openai-key", ALPHA_BASE_URL: gateway.openai.url, RATE_LIMIT_RPM: "0" });
  const app = createApp({ config, log: createLogger("silent"), accessLog: (entry) => entries.push(entry) });
  const post = (body: object) => app.handle(new Request("http://localhost/v1/chat/completions", {
    method: "POST", headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json", "x-request-id": "req-log-1" }, body: JSON.stringify(body),
  }));

  test("a stream that breaks gets a second line with its request id, saying it broke and why", async () => {
    entries.length = 0;
    gateway.openai.next({ kind: "stream", chunks: ["a", "b"], breakAfter: 2, gapMs: 30 });
    await (await post({ model: "gpt-4o", messages: hello, stream: true })).text();
    expect(entries.map((e) => [e.id, e.status, e.broken])).toEqual([
      ["req-log-1", 200, undefined],
      ["req-log-1", 200, "OpenAI upstream dropped the connection in the middle of its reply."],
    ]);
    expect(entries[0]!.url).toBe("http://localhost/v1/chat/completions");
  });

  test("retries show as attempts", async () => {
    entries.length = 0;
    gateway.openai.next(overloaded);
    await (await post({ model: "gpt-4o", messages: hello })).text();
    expect(entries[0]).toMatchObject({ status: 200, attempts: 2, provider: "alpha", model: "gpt-4o" });
  });
});
