// Contract 24 end to end: a gateway on the fakes exports its spans and metrics to a real OTLP
// receiver (decoded with the official protos), in protobuf and in JSON, and the upstream sees the
// CLIENT span's traceparent.
import { afterAll, describe, expect, test } from "bun:test";
import { ATTR_ERROR_TYPE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from "@opentelemetry/semantic-conventions";
import * as semconv from "@opentelemetry/semantic-conventions/incubating";
import { parseTraceparent } from "../../src/telemetry/traceparent.ts";
import { readSse, startGateway } from "../lib/gateway.ts";
import { startOtlpReceiver } from "../lib/otlp-receiver.ts";

const CLAUDE = "anthropic.claude-3-5-sonnet-20241022-v2:0";
const hello = [{ role: "user", content: "hi" }];
const overloaded = { kind: "error" as const, status: 503, message: "overloaded" };
const SERVER = 2;
const CLIENT = 3;

/** Every attribute name the conventions package defines at the pinned version, and parley's own. */
const KNOWN = new Set<string>([ATTR_ERROR_TYPE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT, ...Object.entries(semconv).filter(([k]) => k.startsWith("ATTR_GEN_AI_")).map(([, v]) => v as string)]);
const OWN = ["parley.upstream", "parley.route", "parley.key", "parley.cost_usd", "parley.session"];

let parents = 0;
/** A client's own trace context: a new trace for each test. */
function clientTrace() {
  const traceId = (++parents).toString(16).padStart(32, "a");
  return { traceId, spanId: "b7ad6b7169203331", header: `00-${traceId}-b7ad6b7169203331-01` };
}

for (const protocol of ["http/protobuf", "http/json"] as const) {
  describe(`traces and metrics over ${protocol}`, async () => {
    const receiver = await startOtlpReceiver();
    const gateway = await startGateway({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_BSP_SCHEDULE_DELAY: "20",
      MODEL_FALLBACKS: `gpt-4.1=${CLAUDE}`,
    });
    afterAll(async () => {
      await gateway.app.close();
      await gateway.stop();
      await receiver.stop();
    });
    /** The spans of one trace, once `count` have arrived. */
    const spansOf = async (traceId: string, count: number) => {
      await receiver.waitFor(() => receiver.spans.filter((s) => s.traceId === traceId).length >= count);
      return receiver.spans.filter((s) => s.traceId === traceId);
    };
    const call = (path: string, body: object, trace: string, headers: Record<string, string> = {}) =>
      gateway.json(path, body, { headers: { traceparent: trace, "x-parley-session": "session-7", ...headers } });

    test("a chat passed through: a SERVER span under the client's, a CLIENT span under it, whose traceparent went upstream", async () => {
      gateway.reset();
      const parent = clientTrace();
      const response = await call("/v1/chat/completions", { model: "gpt-4o", messages: hello, max_tokens: 64, temperature: 0.5 }, parent.header);
      expect(response.status).toBe(200);
      expect((await response.json()).choices[0].message.content).toBe("Hello from OpenAI");
      const spans = await spansOf(parent.traceId, 2);
      const server = spans.find((s) => s.kind === SERVER)!;
      const client = spans.find((s) => s.kind === CLIENT)!;
      expect(server.parentSpanId).toBe(parent.spanId);
      expect(server.name).toBe("chat gpt-4o");
      expect(server.attributes).toMatchObject({
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o",
        "gen_ai.provider.name": "openai", "gen_ai.request.max_tokens": 64, "gen_ai.request.temperature": 0.5,
        "gen_ai.usage.input_tokens": expect.any(Number), "gen_ai.usage.output_tokens": expect.any(Number),
        "parley.upstream": "alpha", "parley.key": expect.any(String),
        // Hashed, as the usage record keeps it: never the id as sent.
        "parley.session": new Bun.CryptoHasher("sha256").update("session-7").digest("hex").slice(0, 16),
      });
      expect(server.kinds["gen_ai.request.temperature"]).toBe("doubleValue");
      const cost = response.headers.get("x-parley-cost-usd");
      if (cost !== null) expect(server.attributes["parley.cost_usd"]).toBeCloseTo(Number(cost), 9);
      expect(client.parentSpanId).toBe(server.spanId);
      expect(client.name).toBe("chat gpt-4o");
      const port = Number(new URL(gateway.openai.url).port);
      expect(client.attributes).toMatchObject({ "gen_ai.provider.name": "openai", "server.address": "127.0.0.1", "server.port": port, "parley.upstream": "alpha", "gen_ai.usage.output_tokens": expect.any(Number) });
      expect(client.status.code).toBe(0);
      // The upstream's call is the CLIENT span's child.
      const sent = parseTraceparent(gateway.openai.last().headers.get("traceparent"));
      expect(sent).toEqual({ traceId: parent.traceId, spanId: client.spanId, flags: 1 });
      // No prompt or reply text without the opt-in.
      for (const span of spans) expect(Object.keys(span.attributes).filter((k) => k.endsWith(".messages"))).toEqual([]);
      for (const span of spans) for (const name of Object.keys(span.attributes)) expect(KNOWN.has(name) || OWN.includes(name)).toBe(true);
    });

    test("a converted stream: the spans end with the stream, its tokens on both", async () => {
      gateway.reset();
      const parent = clientTrace();
      const response = await call("/v1/messages", { model: "gpt-4o", max_tokens: 50, stream: true, messages: hello }, parent.header, { "anthropic-version": "2023-06-01" });
      const events = await readSse(response);
      expect(events.at(-1)!.event).toBe("message_stop");
      const spans = await spansOf(parent.traceId, 2);
      const server = spans.find((s) => s.kind === SERVER)!;
      const client = spans.find((s) => s.kind === CLIENT)!;
      expect(server.attributes["gen_ai.usage.output_tokens"]).toEqual(expect.any(Number));
      expect(client.attributes["gen_ai.usage.output_tokens"]).toBe(server.attributes["gen_ai.usage.output_tokens"]);
      expect(client.endNs).toBeLessThanOrEqual(server.endNs);
      expect(parseTraceparent(gateway.openai.last().headers.get("traceparent"))?.spanId).toBe(client.spanId);
    });

    test("a retry then a success: two sibling CLIENT spans, the first failed, each call with its own traceparent", async () => {
      gateway.reset();
      gateway.openai.next(overloaded);
      const parent = clientTrace();
      const response = await call("/v1/chat/completions", { model: "gpt-4o", messages: hello }, parent.header);
      expect(response.status).toBe(200);
      expect(response.headers.get("x-parley-attempts")).toBe("2");
      const spans = await spansOf(parent.traceId, 3);
      const server = spans.find((s) => s.kind === SERVER)!;
      const clients = spans.filter((s) => s.kind === CLIENT).sort((a, b) => Number(a.startNs - b.startNs));
      expect(clients.map((c) => c.parentSpanId)).toEqual([server.spanId, server.spanId]);
      expect(clients[0]!.status.code).toBe(2);
      expect(clients[0]!.attributes["error.type"]).toBe("service_unavailable_error");
      expect(clients[1]!.status.code).toBe(0);
      expect(clients[1]!.attributes["error.type"]).toBeUndefined();
      expect(server.status.code).toBe(0);
      const sent = gateway.openai.received.map((r) => parseTraceparent(r.headers.get("traceparent"))?.spanId);
      expect(sent).toEqual(clients.map((c) => c.spanId));
    });

    test("a failover to another upstream: CLIENT spans for each, the last on Bedrock", async () => {
      gateway.reset();
      gateway.openai.next(overloaded, overloaded, overloaded, overloaded);
      const parent = clientTrace();
      const response = await call("/v1/chat/completions", { model: "gpt-4.1", messages: hello }, parent.header);
      expect(response.status).toBe(200);
      const attempts = Number(response.headers.get("x-parley-attempts"));
      expect(response.headers.get("x-parley-upstream")).toBe("beta");
      const spans = await spansOf(parent.traceId, attempts + 1);
      const server = spans.find((s) => s.kind === SERVER)!;
      const clients = spans.filter((s) => s.kind === CLIENT).sort((a, b) => Number(a.startNs - b.startNs));
      expect(clients.length).toBe(attempts);
      expect(clients.every((c) => c.parentSpanId === server.spanId)).toBe(true);
      expect(clients.at(-1)!.attributes).toMatchObject({ "gen_ai.provider.name": "aws.bedrock", "parley.upstream": "beta", "gen_ai.request.model": CLAUDE });
      expect(clients.slice(0, -1).every((c) => c.attributes["gen_ai.provider.name"] === "openai" && c.status.code === 2)).toBe(true);
      expect(server.attributes).toMatchObject({ "parley.upstream": "beta", "gen_ai.provider.name": "aws.bedrock", "gen_ai.request.model": "gpt-4.1" });
      expect(parseTraceparent(gateway.bedrock.received.at(-1)!.headers.get("traceparent"))?.spanId).toBe(clients.at(-1)!.spanId);
    });

    test("a failed request: the SERVER span says why; without a client traceparent it starts a trace", async () => {
      gateway.reset();
      const response = await gateway.json("/v1/chat/completions", { model: "gpt-4o", messages: "not a list" });
      expect(response.status).toBe(422);
      const { error } = await response.json();
      await receiver.waitFor(() => receiver.spans.some((s) => s.kind === SERVER && s.status.code === 2 && s.attributes["error.type"] === error.type && s.status.message === error.message));
    });

    test("embeddings and legacy completions name their operation", async () => {
      gateway.reset();
      const a = clientTrace();
      const b = clientTrace();
      expect((await call("/v1/embeddings", { model: "text-embedding-3-small", input: "hi" }, a.header)).status).toBe(200);
      expect((await call("/v1/completions", { model: "gpt-4o", prompt: "def " }, b.header)).status).toBe(200);
      const [embed, complete] = [await spansOf(a.traceId, 2), await spansOf(b.traceId, 2)];
      expect(embed.map((s) => s.attributes["gen_ai.operation.name"])).toEqual(["embeddings", "embeddings"]);
      expect(embed.find((s) => s.kind === SERVER)!.name).toBe("embeddings text-embedding-3-small");
      expect(complete.map((s) => s.attributes["gen_ai.operation.name"])).toEqual(["text_completion", "text_completion"]);
    });

    test("no spans for /health, /metrics, /docs; /metrics counts what was exported", async () => {
      const before = receiver.spans.length;
      for (const path of ["/health", "/metrics", "/docs", "/v1/models"]) expect((await gateway.call(path)).status).toBe(200);
      const parent = clientTrace();
      await call("/v1/chat/completions", { model: "gpt-4o", messages: hello }, parent.header);
      await spansOf(parent.traceId, 2);
      expect(receiver.spans.slice(before).every((s) => s.traceId === parent.traceId)).toBe(true);
      const text = await (await gateway.call("/metrics")).text();
      expect(text).toMatch(/^parley_otel_exported_spans_total [1-9]\d*$/m);
      expect(text).toContain('parley_otel_dropped_spans_total{reason="queue_full"} 0');
    });

    test("the three GenAI metrics, flushed at shutdown", async () => {
      // The last test of the file: close flushes the metrics (the interval is a minute by default).
      await gateway.app.close();
      await receiver.waitFor(() => receiver.metricExports.length > 0);
      const names = new Set(receiver.metricExports.flat().map((m) => m.name));
      expect([...names].sort()).toEqual([semconv.METRIC_GEN_AI_CLIENT_OPERATION_DURATION, semconv.METRIC_GEN_AI_CLIENT_TOKEN_USAGE, semconv.METRIC_GEN_AI_SERVER_TIME_TO_FIRST_TOKEN].sort());
      const tokens = receiver.metricExports.flat().find((m) => m.name === semconv.METRIC_GEN_AI_CLIENT_TOKEN_USAGE)!;
      expect(tokens.points.map((p) => p.attributes["gen_ai.token.type"])).toContain("output");
    });
  });
}

describe("with OpenTelemetry off", async () => {
  const gateway = await startGateway();
  afterAll(() => gateway.stop());

  test("a client's traceparent and tracestate go upstream unchanged; without one, none is made up", async () => {
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    await gateway.json("/v1/chat/completions", { model: "gpt-4o", messages: hello }, { headers: { traceparent, tracestate: "vendor=1" } });
    expect(gateway.openai.last().headers.get("traceparent")).toBe(traceparent);
    expect(gateway.openai.last().headers.get("tracestate")).toBe("vendor=1");
    await gateway.json("/v1/chat/completions", { model: CLAUDE, messages: hello, stream: true }, { headers: { traceparent } }).then((r) => r.text());
    expect(gateway.bedrock.last().headers.get("traceparent")).toBe(traceparent);
    await gateway.json("/v1/chat/completions", { model: "gpt-4o", messages: hello });
    expect(gateway.openai.last().headers.get("traceparent")).toBeNull();
    // /metrics is as it was: no OpenTelemetry series.
    expect(await (await gateway.call("/metrics")).text()).not.toContain("parley_otel_");
  });
});

test("prompt and reply text only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true", async () => {
  await using receiver = await startOtlpReceiver();
  const gateway = await startGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" });
  try {
    // Passed through, and converted.
    await gateway.json("/v1/chat/completions", { model: "gpt-4o", messages: hello });
    await gateway.json("/v1/chat/completions?target_format=beta_messages", { model: "gpt-4o", messages: hello, max_tokens: 20 });
    await gateway.app.close();
    await receiver.waitFor(() => receiver.spans.filter((s) => s.kind === SERVER).length >= 2);
    const servers = receiver.spans.filter((s) => s.kind === SERVER);
    for (const span of servers) expect(JSON.parse(span.attributes["gen_ai.input.messages"] as string)).toEqual(hello);
    expect(servers.map((s) => JSON.stringify(s.attributes["gen_ai.output.messages"]))).toEqual(Array(2).fill(expect.stringContaining("Hello from OpenAI")));
    // The converted reply was read: its id and finish reason are known, on both spans.
    const converted = receiver.spans.filter((s) => s.attributes["gen_ai.response.id"] === "chatcmpl-fake123");
    expect(converted.map((s) => [s.kind, s.attributes["gen_ai.response.finish_reasons"]]).sort()).toEqual([[SERVER, ["stop"]], [CLIENT, ["stop"]]]);
  } finally {
    await gateway.stop();
  }
});

test("a client's unsampled trace stays unsampled: nothing exported, the upstream still gets a child traceparent (flags 00)", async () => {
  await using receiver = await startOtlpReceiver();
  const gateway = await startGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRICS_EXPORTER: "none" });
  try {
    const unsampled = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";
    expect((await gateway.json("/v1/chat/completions", { model: "gpt-4o", messages: hello }, { headers: { traceparent: unsampled } })).status).toBe(200);
    const sent = parseTraceparent(gateway.openai.last().headers.get("traceparent"));
    expect(sent).toMatchObject({ traceId: "0af7651916cd43dd8448eb211c80319c", flags: 0 });
    expect(sent!.spanId).not.toBe("b7ad6b7169203331");
    await gateway.app.close();
    expect(receiver.spans).toEqual([]);
  } finally {
    await gateway.stop();
  }
});

test("metrics only (OTEL_TRACES_EXPORTER=none): the client's traceparent goes upstream unchanged", async () => {
  await using receiver = await startOtlpReceiver();
  const gateway = await startGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_EXPORTER: "none" });
  try {
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    await gateway.json("/v1/chat/completions", { model: "gpt-4o", messages: hello }, { headers: { traceparent } });
    expect(gateway.openai.last().headers.get("traceparent")).toBe(traceparent);
    await gateway.app.close();
    expect(receiver.spans).toEqual([]);
    expect(receiver.metricExports.flat().map((m) => m.name)).toContain(semconv.METRIC_GEN_AI_CLIENT_OPERATION_DURATION);
  } finally {
    await gateway.stop();
  }
});
