/**
 * POST /v1/completions (contract 18), the legacy endpoint IDE autocomplete calls with a `suffix`
 * (fill-in-the-middle): passed through to an OpenAI-compatible upstream, answered by the mock,
 * refused for other kinds. Through the official openai SDK and plain HTTP.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { readSse, startGateway, TEST_KEY } from "../lib/gateway.ts";

const gateway = await startGateway({ RATE_LIMIT_RPM: "0", UPSTREAM_RETRIES: "1" });
const client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gateway.listen()}/v1`, maxRetries: 0 });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const INSTRUCT = "gpt-3.5-turbo-instruct";
const FIM = { prompt: "def add(a, b):\n    ", suffix: "\n\nprint(add(1, 2))\n", max_tokens: 16, temperature: 0 };
const post = (body: object) => gateway.json("/v1/completions", body);

describe("passthrough to an openai upstream", () => {
  test("a fill-in-the-middle request goes up as sent and the reply comes back byte for byte", async () => {
    gateway.openai.next({ kind: "reply", text: "return a + b" });
    const body = { model: INSTRUCT, ...FIM, echo: false, n: 1, some_server_field: { x: 1 } };
    const response = await post(body);
    expect(response.status).toBe(200);
    expect(gateway.openai.last().path).toBe("/v1/completions");
    expect(gateway.openai.last().raw).toBe(JSON.stringify(body));
    const reply = await response.json();
    expect(reply).toMatchObject({ id: "cmpl-fake123", object: "text_completion", model: INSTRUCT, choices: [{ text: "return a + b", finish_reason: "stop" }] });
    // 11 prompt and 7 completion tokens at $1.50 and $2 a million.
    expect(Number(response.headers.get("x-parley-cost-usd"))).toBeCloseTo((11 * 1.5 + 7 * 2) / 1e6, 12);

    const own = `{ "id" : "cmpl-own",  "object":"text_completion","created":7,"model":"${INSTRUCT}","choices":[{"text":"return a + b","index":0,"logprobs":null,"finish_reason":"stop"}], "x_server": true }`;
    gateway.openai.next({ kind: "raw", body: own });
    expect(await (await post(body)).text()).toBe(own);
  });

  test("completions.create with a suffix", async () => {
    gateway.openai.next({ kind: "reply", text: "return a + b" });
    const completion = await client.completions.create({ model: INSTRUCT, ...FIM });
    expect(completion.choices[0]!.text).toBe("return a + b");
    expect(gateway.openai.last().body.suffix).toBe(FIM.suffix);
    expect(completion.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
  });

  test("completions.create streamed: the upstream's chunks arrive as they come, to [DONE]", async () => {
    gateway.openai.next({ kind: "stream", chunks: ["return", " a", " + b"] });
    const stream = await client.completions.create({ model: INSTRUCT, ...FIM, stream: true, stream_options: { include_usage: true } });
    const texts: string[] = [];
    let usage: unknown;
    for await (const chunk of stream) {
      if (chunk.choices[0]) texts.push(chunk.choices[0].text);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(texts.join("")).toBe("return a + b");
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(gateway.openai.last().body).toMatchObject({ stream: true, suffix: FIM.suffix });
  });

  test("a stream that breaks ends with an error event, never just stops", async () => {
    gateway.openai.next({ kind: "stream", chunks: ["a", "b", "c"], breakAfter: 2, gapMs: 5 });
    const events = await readSse(await post({ model: INSTRUCT, prompt: "x", stream: true }));
    expect(events.at(-1)!.data.error.type).toBe("service_unavailable_error");
  });

  test("an id routed to an upstream by name goes up as that upstream's id", async () => {
    const response = await post({ model: `alpha/${INSTRUCT}`, prompt: "x", suffix: "y" });
    expect(response.status).toBe(200);
    expect(gateway.openai.last().body).toEqual({ model: INSTRUCT, prompt: "x", suffix: "y" });
  });

  test("a 503 before the answer is retried", async () => {
    gateway.openai.next({ kind: "error", status: 503, message: "busy" });
    const response = await post({ model: INSTRUCT, prompt: "x" });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-parley-attempts")).toBe("2");
  });

  test("a reply that is not a completion is the upstream failing (503)", async () => {
    gateway.openai.next({ kind: "raw", body: JSON.stringify({ choices: [{ message: { content: "chat?" } }] }) });
    gateway.openai.next({ kind: "raw", body: JSON.stringify({ choices: [{ message: { content: "chat?" } }] }) });
    expect((await post({ model: INSTRUCT, prompt: "x" })).status).toBe(503);
  });
});

describe("the mock", () => {
  test("answers in the text_completion shape, echoing the prompt, the same every time", async () => {
    const first = await client.completions.create({ model: "mock", ...FIM });
    const second = await client.completions.create({ model: "mock", ...FIM });
    expect(first.object).toBe("text_completion");
    expect(first.model).toBe("mock");
    expect(first.choices[0]!.text).toBe(FIM.prompt);
    expect(second.choices[0]!.text).toBe(first.choices[0]!.text);
    expect(first.usage!.completion_tokens).toBeGreaterThan(0);
    expect(first.choices[0]!.finish_reason).toBe("stop");
  });

  test("streams it as text_completion chunks ending in [DONE]", async () => {
    const stream = await client.completions.create({ model: "mock", prompt: "Hello mock world", stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]!.text).join("")).toBe("Hello mock world");
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("stop");
    const raw = await (await post({ model: "mock", prompt: "Hi", stream: true })).text();
    expect(raw.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });

  test("mock/error-429 fails as an upstream would", async () => {
    const error = await client.completions.create({ model: "mock/error-429", prompt: "x" }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
  });
});

describe("other kinds", () => {
  test("a Bedrock model is a 400 naming the endpoint and the upstream's kind; nothing is sent", async () => {
    const error = await client.completions.create({ model: "amazon.titan-text-express-v1", ...FIM }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.message).toContain("POST /v1/completions");
    expect(error.message).toContain("kind bedrock");
    expect(gateway.bedrock.received).toHaveLength(0);
  });

  test("no model is a 400; an unknown one 404; a body that is not JSON 400", async () => {
    expect((await post({ prompt: "x" })).status).toBe(400);
    expect((await post({ model: "no-such-model", prompt: "x" })).status).toBe(404);
    expect((await gateway.call("/v1/completions", { method: "POST", body: "{", headers: { "content-type": "application/json" } })).status).toBe(400);
  });
});
