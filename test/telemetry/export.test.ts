// Spans and metrics reach a real OTLP/HTTP receiver, decoded there with the official protos.
import { describe, expect, test } from "bun:test";
import { ATTR, createTelemetry } from "../../src/telemetry/index.ts";
import { parseTraceparent } from "../../src/telemetry/traceparent.ts";
import { startOtlpReceiver } from "../lib/otlp-receiver.ts";

const CLIENT_PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/** One request as the edge and the core will report it: a failed attempt, then a retry that answers. */
function oneRequest(telemetry: ReturnType<typeof createTelemetry>["telemetry"]) {
  const server = telemetry.startServer(CLIENT_PARENT, {
    [ATTR.operation]: "chat",
    [ATTR.requestModel]: "gpt-4o",
    [ATTR.route]: "default",
    [ATTR.key]: "main",
    [ATTR.session]: "sess-1",
  });
  const first = server.child({ [ATTR.provider]: "openai", [ATTR.requestModel]: "gpt-4o", [ATTR.upstream]: "alpha", [ATTR.serverAddress]: "127.0.0.1", [ATTR.serverPort]: 8080 });
  first.fail("503", "upstream unavailable");
  first.end();
  const second = server.child({ [ATTR.provider]: "aws.bedrock", [ATTR.requestModel]: "gpt-4o", [ATTR.upstream]: "beta" });
  second.firstToken();
  second
    .set(ATTR.responseModel, "gpt-4o-2024-08-06")
    .set(ATTR.responseId, "chatcmpl-1")
    .set(ATTR.finishReasons, ["stop"])
    .set(ATTR.maxTokens, 256)
    .set(ATTR.temperature, 1)
    .usage({ input: { total: 1200, cacheRead: 1000, cacheWrite: 100 }, output: 42 });
  second.end();
  server.firstToken();
  server.set(ATTR.responseModel, "gpt-4o-2024-08-06").set(ATTR.upstream, "beta").set(ATTR.costUsd, 0.0123).set(ATTR.provider, "aws.bedrock");
  server.end();
  return { server, first, second };
}

for (const protocol of ["http/protobuf", "http/json"] as const) {
  describe(`OTLP ${protocol}`, () => {
    test("a SERVER span with its CLIENT attempts as siblings, GenAI and parley attributes", async () => {
      await using receiver = await startOtlpReceiver();
      const { telemetry } = createTelemetry(
        { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test,team=a%20b", OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=secret%3D1" },
        "9.9.9",
      );
      const before = BigInt(Date.now() - 1) * 1_000_000n;
      const { first, second } = oneRequest(telemetry);
      const after = BigInt(Date.now() + 1) * 1_000_000n;
      expect(parseTraceparent(first.traceparent)?.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
      await telemetry.shutdown();
      await receiver.waitFor(() => receiver.spans.length === 3);
      expect(receiver.errors).toEqual([]);
      const req = receiver.requests.find((r) => r.path === "/v1/traces")!;
      expect(req.format).toBe(protocol === "http/json" ? "json" : "protobuf");
      expect(req.headers.get("x-api-key")).toBe("secret=1");

      const server = receiver.spans.find((s) => s.kind === 2)!;
      const clients = receiver.spans.filter((s) => s.kind === 3);
      expect(server.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
      expect(server.parentSpanId).toBe("b7ad6b7169203331");
      expect(server.flags).toBe(0x301); // sampled, parent known to be remote
      expect(server.name).toBe("chat gpt-4o");
      expect(clients.map((c) => c.parentSpanId)).toEqual([server.spanId, server.spanId]);
      expect(clients.every((c) => c.traceId === server.traceId && c.flags === 0x101)).toBe(true);
      expect(clients.map((c) => c.spanId)).toEqual([parseTraceparent(first.traceparent)!.spanId, parseTraceparent(second.traceparent)!.spanId]);

      const [failed, answered] = clients as [(typeof clients)[0], (typeof clients)[0]];
      expect(failed.status).toEqual({ code: 2, message: "upstream unavailable" });
      expect(failed.attributes).toMatchObject({ "error.type": "503", "gen_ai.operation.name": "chat", "server.address": "127.0.0.1", "server.port": 8080 });
      expect(answered.status.code).toBe(0);
      expect(answered.attributes).toEqual({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "aws.bedrock",
        "gen_ai.request.model": "gpt-4o",
        "parley.upstream": "beta",
        "gen_ai.response.model": "gpt-4o-2024-08-06",
        "gen_ai.response.id": "chatcmpl-1",
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.request.max_tokens": 256,
        "gen_ai.request.temperature": 1,
        "gen_ai.usage.input_tokens": 1200,
        "gen_ai.usage.output_tokens": 42,
        "gen_ai.usage.cache_read.input_tokens": 1000,
        "gen_ai.usage.cache_creation.input_tokens": 100,
      });
      expect(answered.kinds).toMatchObject({ "gen_ai.request.temperature": "doubleValue", "gen_ai.request.max_tokens": "intValue", "gen_ai.usage.input_tokens": "intValue", "gen_ai.response.finish_reasons": "arrayValue" });
      expect(server.kinds["parley.cost_usd"]).toBe("doubleValue");
      expect(server.attributes).toMatchObject({ "parley.route": "default", "parley.key": "main", "parley.session": "sess-1", "parley.cost_usd": 0.0123 });
      expect(server.endNs).toBeGreaterThanOrEqual(server.startNs);
      for (const s of receiver.spans) {
        expect(s.startNs).toBeGreaterThanOrEqual(before);
        expect(s.endNs).toBeLessThanOrEqual(after);
        expect(s.startNs % 1000n).toBe(0n); // microsecond precision, written exactly
      }
      expect(server.resource).toMatchObject({ "service.name": "parley", "service.version": "9.9.9", "deployment.environment.name": "test", team: "a b" });
      expect(server.scope).toEqual({ name: "parley", version: "9.9.9" });
      expect(server.schemaUrl).toBe("https://opentelemetry.io/schemas/1.40.0");
    });

    test("the three histograms, by operation, provider, model and token type", async () => {
      await using receiver = await startOtlpReceiver();
      const { telemetry } = createTelemetry({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/v1/metrics`, OTEL_EXPORTER_OTLP_PROTOCOL: protocol }, "1.0.0");
      oneRequest(telemetry);
      oneRequest(telemetry);
      await telemetry.shutdown();
      await receiver.waitFor(() => receiver.metricExports.length === 1);
      expect(receiver.errors).toEqual([]);
      expect(receiver.requests.every((r) => r.path === "/v1/metrics")).toBe(true);
      const byName = new Map(receiver.metricExports[0]!.map((m) => [m.name, m]));
      expect([...byName.keys()].sort()).toEqual(["gen_ai.client.operation.duration", "gen_ai.client.token.usage", "gen_ai.server.time_to_first_token"]);

      const tokens = byName.get("gen_ai.client.token.usage")!;
      expect(tokens.unit).toBe("{token}");
      expect(tokens.temporality).toBe(2);
      const input = tokens.points.find((p) => p.attributes["gen_ai.token.type"] === "input")!;
      expect(input.attributes).toEqual({ "gen_ai.operation.name": "chat", "gen_ai.provider.name": "aws.bedrock", "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06", "gen_ai.token.type": "input" });
      expect(input).toMatchObject({ count: 2, sum: 2400, min: 1200, max: 1200 });
      expect(input.explicitBounds).toEqual([1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]);
      expect(input.bucketCounts).toEqual([0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
      expect(tokens.points.find((p) => p.attributes["gen_ai.token.type"] === "output")).toMatchObject({ count: 2, sum: 84 });

      const duration = byName.get("gen_ai.client.operation.duration")!;
      expect(duration.unit).toBe("s");
      expect(duration.points.map((p) => p.count).sort()).toEqual([2, 2]);
      expect(duration.points.find((p) => p.attributes["error.type"] === "503")?.attributes["gen_ai.provider.name"]).toBe("openai");
      expect(duration.points[0]!.explicitBounds[0]).toBe(0.01);

      const ttft = byName.get("gen_ai.server.time_to_first_token")!;
      expect(ttft.points).toHaveLength(1);
      expect(ttft.points[0]!.count).toBe(2);
      expect(ttft.points[0]!.explicitBounds).toEqual([0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0]);
      expect(ttft.points[0]!.startNs).toBeLessThanOrEqual(ttft.points[0]!.timeNs);
    });
  });
}

test("metrics go out every OTEL_METRIC_EXPORT_INTERVAL and spans every OTEL_BSP_SCHEDULE_DELAY, without shutdown", async () => {
  await using receiver = await startOtlpReceiver();
  const { telemetry } = createTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "20", OTEL_METRIC_EXPORT_INTERVAL: "20" }, "1.0.0");
  oneRequest(telemetry);
  await receiver.waitFor(() => receiver.spans.length === 3 && receiver.metricExports.length >= 2);
  // Cumulative: every export carries the counts so far.
  expect(receiver.metricExports.at(-1)!.find((m) => m.name === "gen_ai.server.time_to_first_token")!.points[0]!.count).toBe(1);
  await telemetry.shutdown();
});

test("message content only on opt-in", async () => {
  await using receiver = await startOtlpReceiver();
  for (const capture of ["false", "true"]) {
    const { telemetry } = createTelemetry({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: capture }, "1.0.0");
    expect(telemetry.captureContent).toBe(capture === "true");
    const span = telemetry.startServer(null, { [ATTR.operation]: "chat", [ATTR.session]: capture });
    span.messages([{ role: "user", parts: [{ type: "text", content: "hi" }] }], [{ role: "assistant", parts: [{ type: "text", content: "hello" }] }]);
    span.end();
    await telemetry.shutdown();
  }
  await receiver.waitFor(() => receiver.spans.length === 2);
  const [off, on] = receiver.spans as [any, any];
  expect(off.attributes["gen_ai.input.messages"]).toBeUndefined();
  expect(off.name).toBe("chat");
  expect(JSON.parse(on.attributes["gen_ai.input.messages"])[0].parts[0].content).toBe("hi");
  expect(JSON.parse(on.attributes["gen_ai.output.messages"])[0].role).toBe("assistant");
  expect(off.parentSpanId).toBe("");
});

test("with metrics only, spans still feed the metrics and the client's traceparent goes upstream unchanged", async () => {
  await using receiver = await startOtlpReceiver();
  const { telemetry } = createTelemetry({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/v1/metrics` }, "1.0.0");
  const server = telemetry.startServer(CLIENT_PARENT, { [ATTR.operation]: "chat" });
  const client = server.child();
  expect(client.traceparent).toBeUndefined();
  client.end();
  server.end();
  await telemetry.shutdown();
  expect(receiver.requests.map((r) => r.path)).toEqual(["/v1/metrics"]);
});

test("strings of any length and script, and whole and fractional numbers, arrive as sent in both protocols", async () => {
  await using receiver = await startOtlpReceiver();
  const long = "x".repeat(300);
  const unicode = "modèle-日本語-🚀";
  for (const protocol of ["http/protobuf", "http/json"]) {
    const { telemetry } = createTelemetry({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, OTEL_EXPORTER_OTLP_PROTOCOL: protocol }, "1");
    const span = telemetry.startServer(null, { [ATTR.operation]: "chat", [ATTR.requestModel]: unicode, [ATTR.session]: long, [ATTR.key]: `${unicode}${long}`, [ATTR.route]: "" });
    span.set(ATTR.finishReasons, ["stop", "", "länge"]).set(ATTR.maxTokens, 2 ** 40).set(ATTR.costUsd, 0).set(ATTR.temperature, 0.25).set(ATTR.serverPort, -1);
    span.end();
    await telemetry.shutdown();
  }
  await receiver.waitFor(() => receiver.spans.length === 2);
  for (const s of receiver.spans) {
    expect(s.name).toBe(`chat ${unicode}`);
    expect(s.attributes).toMatchObject({
      "gen_ai.request.model": unicode,
      "parley.session": long,
      "parley.key": `${unicode}${long}`,
      "parley.route": "",
      "gen_ai.response.finish_reasons": ["stop", "", "länge"],
      "gen_ai.request.max_tokens": 2 ** 40,
      "parley.cost_usd": 0,
      "gen_ai.request.temperature": 0.25,
      "server.port": -1,
    });
    expect(s.kinds["parley.cost_usd"]).toBe("doubleValue");
    expect(s.kinds["server.port"]).toBe("intValue");
  }
});
