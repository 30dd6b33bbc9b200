import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { extractText } from "../../src/files/extract.ts";
import { testApp } from "../lib/app.ts";
import { startGateway, type Gateway } from "../lib/gateway.ts";
import { startFaultyUpstream, type FaultyUpstream } from "../lib/faulty-upstream.ts";
import { fuzzEnv, SECRETS } from "./session.ts";
import { deepText } from "./values.ts";

/** What the fuzz found, pinned down one by one. */

describe("a JSON file nested 10,000 levels deep", () => {
  test("is extracted compact: indentation would have made 200 million characters of it", () => {
    const text = deepText(10_000);
    const extracted = extractText(new TextEncoder().encode(text), "application/json", true);
    expect(extracted.length).toBeLessThan(text.length * 2);
    expect(JSON.parse(extracted)).toEqual(JSON.parse(text));
  });

  test("shallow JSON is still pretty-printed", () => {
    expect(extractText(new TextEncoder().encode('{"a":[1,{"b":2}]}'), "application/json", true)).toBe('{\n  "a": [\n    1,\n    {\n      "b": 2\n    }\n  ]\n}');
  });
});

describe("a Bedrock stream whose body is no event stream (HTML, null, JSON)", () => {
  let upstream: FaultyUpstream;
  let app: ReturnType<typeof testApp>;
  beforeAll(async () => {
    upstream = await startFaultyUpstream();
    app = testApp({ ...fuzzEnv(mkdtempSync(join(tmpdir(), "parley-fuzz-"))), ALPHA_BASE_URL: upstream.openaiUrl, BETA_ENDPOINT_URL: upstream.bedrockUrl });
  });
  afterAll(() => upstream.stop());

  test("is a 503 naming it (the first event already fails), without allocating the 1-2 GiB its first bytes claim", async () => {
    const before = process.memoryUsage().rss;
    const models = ["anthropic.fault-html", "amazon.titan-text-fault-null", "meta.fault-wrong-shape-4", "anthropic.fault-truncated-json"];
    const replies = await Promise.all(models.map((model) =>
      app.json("/v1/chat/completions", { model, stream: true, messages: [{ role: "user", content: "hi" }] }, { headers: { authorization: `Bearer ${SECRETS.API_KEY}` } })));
    const growth = (process.memoryUsage().rss - before) / 2 ** 20;
    for (const reply of replies) {
      expect(reply.status).toBe(503);
      expect((await reply.json()).error.message).toContain("no event stream");
    }
    // Four such replies once took 4-6 GB: "<!DO" read as a frame length is 1 GB, "null" 1.8 GB.
    expect(growth).toBeLessThan(200);
  });
});

describe("prototype names in the model settings", () => {
  test("MODEL_ROUTES must name a provider, never an Object.prototype member", () => {
    for (const provider of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      expect(() => loadConfig({ env: { MODEL_ROUTES: `x*=${provider}` }, cwd: tmpdir() })).toThrow(ConfigError);
    }
  });

  test("aliases and fallbacks with prototype names route as written", async () => {
    const { json } = testApp({ MODEL_ALIASES: "__proto__=mock,toString=__proto__", MODEL_FALLBACKS: "constructor=__proto__|mock", MODEL_ROUTES: "constructor=alpha" });
    const ask = (model: string) => json("/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }] });
    expect((await ask("__proto__")).status).toBe(200);
    const toString = await ask("toString");
    expect(toString.status).toBe(404);
    expect((await toString.json()).error.message).toContain("'toString'");
    // constructor routes to alpha, which is not configured here: a 404 naming the variable, no fallback (not retryable).
    expect((await ask("constructor")).status).toBe(404);
  });
});

describe("a relayed OpenAI stream that stops in the middle of a line", () => {
  test("gets its error event on a line of its own, so SSE clients see it", async () => {
    const upstream = await startFaultyUpstream();
    try {
      const { json } = testApp({ ...fuzzEnv(mkdtempSync(join(tmpdir(), "parley-fuzz-"))), ALPHA_BASE_URL: upstream.openaiUrl, BETA_ENDPOINT_URL: upstream.bedrockUrl });
      for (const model of ["gpt-fault-sse-html", "gpt-fault-garbage"]) {
        const reply = await json("/v1/chat/completions", { model, stream: true, messages: [{ role: "user", content: "hi" }] }, { headers: { authorization: `Bearer ${SECRETS.API_KEY}` } });
        const text = await reply.text();
        expect(text).toMatch(/\n\ndata: \{"error":\{[^\n]*\}\}\n\n$/);
      }
    } finally {
      upstream.stop();
    }
  });
});

describe("OpenAI replies that say nothing", () => {
  let gateway: Gateway;
  beforeAll(async () => void (gateway = await startGateway({ UPSTREAM_RETRIES: "0" })));
  afterAll(() => gateway.stop());
  const ask = () => gateway.json("/v1/chat/completions?target_format=beta_messages", { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });

  test("a null message without a finish reason is the upstream failing, not an empty answer", async () => {
    gateway.openai.next({ kind: "raw", body: '{"choices":[{"message":null}]}' });
    const response = await ask();
    expect(response.status).toBe(503);
    expect((await response.json()).error.message).toContain("no message and no finish_reason");
  });

  test("a null message with a finish reason (a content filter) is an empty answer that says so", async () => {
    gateway.openai.next({ kind: "raw", body: '{"choices":[{"message":null,"finish_reason":"content_filter"}]}' });
    const reply = await (await ask()).json();
    expect(reply).toMatchObject({ content: [], stop_reason: "refusal" });
  });

  test("negative token counts are not passed on", async () => {
    gateway.openai.next({ kind: "raw", body: '{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":-5,"completion_tokens":-1}}' });
    expect((await (await ask()).json()).usage).toMatchObject({ input_tokens: 0, output_tokens: 0 });
  });
});

describe("a model id of megabytes", () => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startGateway();
  });
  afterAll(() => gateway.stop());

  test("is a 404 at once, quoting the start of it: its near names are not looked for letter by letter", async () => {
    const model = "x".repeat(1_500_000);
    // CPU time, not the clock: the gateway runs in this process, and a busy machine stretches only the clock.
    const before = process.cpuUsage();
    const response = await gateway.json("/v1/responses", { model, input: "hi" });
    const { user, system } = process.cpuUsage(before);
    expect((user + system) / 1000).toBeLessThan(2000);
    expect(response.status).toBe(404);
    const { error } = await response.json();
    expect(error.message).toStartWith(`The model '${"x".repeat(200)}…' (1500000 characters) is not routed to any upstream.`);
    expect(error.message.length).toBeLessThan(1000);
  });
});

describe("lone surrogates and bytes that are no UTF-8 (contract 10)", () => {
  let gateway: Gateway;
  beforeAll(async () => void (gateway = await startGateway({ UPSTREAM_RETRIES: "0" })));
  afterAll(() => gateway.stop());

  test("a model id with one is an unknown model in every dialect, never a 500 (Bedrock's URL path cannot carry it)", async () => {
    // Each in its vendor's envelope: OpenAI's Responses calls an unknown model an invalid_request_error.
    const bodies: [string, (model: string) => object, string][] = [
      ["/v1/chat/completions", (model) => ({ model, messages: [{ role: "user", content: "hi" }] }), "not_found_error"],
      ["/v1/messages", (model) => ({ model, max_tokens: 5, messages: [{ role: "user", content: "hi" }] }), "not_found_error"],
      ["/v1/messages/count_tokens", (model) => ({ model, messages: [{ role: "user", content: "hi" }] }), "not_found_error"],
      ["/v1/responses", (model) => ({ model, input: "hi" }), "invalid_request_error"],
    ];
    for (const model of ["anthropic.claude-3-5-haiku-20241022-v1:0\udfff", "amazon.titan-text-express-v1\ud800", "\ud800", "\udc00x", "mock/\ud800"]) {
      for (const [path, body, type] of bodies) {
        for (const stream of [false, true]) {
          const response = await gateway.json(path, { ...body(model), stream });
          expect({ path, model, status: response.status }).toEqual({ path, model, status: 404 });
          expect((await response.json()).error.type).toBe(type);
        }
      }
    }
    const near = await (await gateway.json("/v1/chat/completions", { model: "gpt-4o-mini\ud800", messages: [{ role: "user", content: "hi" }] })).json();
    expect(near.error.message).toStartWith("The model 'gpt-4o-mini\ud800' is not routed to any upstream.");
  });

  test("GET /v1/models/<id> whose id is not percent-encoded UTF-8 is a 404", async () => {
    for (const id of ["%ED%A0%80", "%ED%B0%80x", "%ff", "%C0%80", "%E2%82", "%"]) {
      const response = await gateway.call(`/v1/models/${id}`);
      expect({ id, status: response.status }).toEqual({ id, status: 404 });
      expect((await response.json()).error.type).toBe("not_found_error");
    }
  });

  test("x-parley-model carries any model id as a header can: percent-encoded past ASCII, cut past 200 characters", async () => {
    const ask = (model: string) => gateway.json("/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }] });
    const unicode = await ask("mock/日本");
    expect(unicode.status).toBe(200);
    expect(unicode.headers.get("x-parley-model")).toBe("mock/%E6%97%A5%E6%9C%AC");
    expect((await unicode.json()).model).toBe("mock/日本");
    const long = await ask(`mock/${"y".repeat(100_000)}`);
    expect(long.status).toBe(200);
    expect(long.headers.get("x-parley-model")).toBe(`mock/${"y".repeat(195)}%E2%80%A6(100005 characters)`);
  });
});
