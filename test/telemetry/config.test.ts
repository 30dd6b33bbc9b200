import { describe, expect, test } from "bun:test";
import { readOtelConfig } from "../../src/telemetry/config.ts";
import { TELEMETRY_OFF, createTelemetry } from "../../src/telemetry/index.ts";
import { parseSampler, sampled } from "../../src/telemetry/sampler.ts";

describe("configuration", () => {
  test("off unless an endpoint is set, and then a constant no-op", () => {
    expect(readOtelConfig({ OTEL_SERVICE_NAME: "x", OTEL_TRACES_SAMPLER: "always_on" }).config).toBeNull();
    const { telemetry } = createTelemetry({}, "1.0.0");
    expect(telemetry).toBe(TELEMETRY_OFF);
    const span = telemetry.startServer("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    expect(span.child()).toBe(span);
    expect(telemetry.startServer(null)).toBe(span); // one constant: nothing allocated per request
    expect(span.set("gen_ai.request.model", "m")).toBe(span);
    expect(span.traceparent).toBeUndefined();
    expect(readOtelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }).config).toBeNull();
  });

  test("the base endpoint gets each signal's path; a signal's own endpoint is used as given", () => {
    const both = readOtelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" }).config!;
    expect(both.traces?.url).toBe("http://c:4318/v1/traces");
    expect(both.metrics?.url).toBe("http://c:4318/v1/metrics");
    const own = readOtelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://t.example/otlp" }).config!;
    expect(own.traces?.url).toBe("https://t.example/otlp");
    expect(own.metrics?.url).toBe("http://c:4318/v1/metrics");
    const tracesOnly = readOtelConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t:4318/v1/traces" }).config!;
    expect(tracesOnly.metrics).toBeNull();
    expect(readOtelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_METRICS_EXPORTER: "none" }).config!.metrics).toBeNull();
  });

  test("defaults", () => {
    const c = readOtelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }, "2.0.0").config!;
    expect(c.traces).toEqual({ url: "http://c:4318/v1/traces", protocol: "http/protobuf", headers: {}, timeoutMs: 10000 });
    expect(c.resource).toMatchObject({ "service.name": "parley", "service.version": "2.0.0" });
    expect(c.resource["service.instance.id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(readOtelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }).config!.resource["service.instance.id"]).not.toBe(c.resource["service.instance.id"]);
    expect(readOtelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_RESOURCE_ATTRIBUTES: "service.instance.id=pod-1" }).config!.resource["service.instance.id"]).toBe("pod-1");
    expect(c.sampler).toEqual({ root: "always_on", ratio: 1, parentBased: true });
    expect([c.scheduleDelayMs, c.exportTimeoutMs, c.maxQueueSize, c.maxExportBatchSize, c.metricIntervalMs]).toEqual([5000, 30000, 2048, 512, 60000]);
    expect(c.captureContent).toBe(false);
  });

  test("headers, protocol, resource and service name per the specification", () => {
    const { config, warnings } = readOtelConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc,x-tenant=t1",
      OTEL_EXPORTER_OTLP_METRICS_HEADERS: "x-only=metrics",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/protobuf",
      OTEL_RESOURCE_ATTRIBUTES: "service.name=ignored,deployment.environment.name=prod",
      OTEL_SERVICE_NAME: "gateway-eu",
      OTEL_BSP_SCHEDULE_DELAY: "250",
      OTEL_METRIC_EXPORT_INTERVAL: "1000",
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "TRUE",
    });
    expect(warnings).toEqual([]);
    expect(config!.traces).toMatchObject({ protocol: "http/json", headers: { authorization: "Bearer abc", "x-tenant": "t1" } });
    expect(config!.metrics).toMatchObject({ protocol: "http/protobuf", headers: { "x-only": "metrics" } });
    expect(config!.resource).toMatchObject({ "service.name": "gateway-eu", "deployment.environment.name": "prod" });
    expect([config!.scheduleDelayMs, config!.metricIntervalMs, config!.captureContent]).toEqual([250, 1000, true]);
  });

  test("a malformed value is ignored with a warning that shows no secret", () => {
    const { config, warnings } = readOtelConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization%zz=Bearer-secret,broken",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_BSP_SCHEDULE_DELAY: "soon",
      OTEL_TRACES_SAMPLER: "sometimes",
    });
    expect(config!.traces?.protocol).toBe("http/protobuf");
    expect(config!.scheduleDelayMs).toBe(5000);
    expect(config!.sampler.root).toBe("always_on");
    expect(warnings).toHaveLength(4);
    expect(warnings.join("\n")).not.toContain("secret");
    expect(readOtelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:4318" }).warnings[0]).toContain("not an http(s) URL");
  });
});

describe("sampler", () => {
  const warnings: string[] = [];
  const id = (low13: string) => `${"a".repeat(19)}${low13}`;
  const remote = (flags: number) => ({ traceId: id("0000000000000"), spanId: "00f067aa0ba902b7", flags });

  test("always_on, always_off", () => {
    expect(sampled(parseSampler("always_on", undefined, warnings), id("fffffffffffff"), remote(0))).toBe(true);
    expect(sampled(parseSampler("always_off", undefined, warnings), id("0000000000000"), remote(1))).toBe(false);
  });

  test("traceidratio keeps the traces whose low 52 bits fall under the ratio, the same way every time", () => {
    const half = parseSampler("traceidratio", "0.5", warnings);
    expect(half).toEqual({ root: "ratio", ratio: 0.5, parentBased: false });
    expect(sampled(half, id("7ffffffffffff"), null)).toBe(true);
    expect(sampled(half, id("8000000000000"), null)).toBe(false);
    expect(sampled(parseSampler("traceidratio", "0", warnings), id("0000000000001"), null)).toBe(false);
    expect(sampled(parseSampler("traceidratio", undefined, warnings), id("fffffffffffff"), null)).toBe(true);
    let kept = 0;
    const quarter = parseSampler("traceidratio", "0.25", warnings);
    for (let i = 0; i < 4000; i++) if (sampled(quarter, crypto.randomUUID().replaceAll("-", ""), null)) kept++;
    expect(kept).toBeGreaterThan(800);
    expect(kept).toBeLessThan(1200);
  });

  test("parentbased_* follows a client's sampled flag and uses its root sampler otherwise", () => {
    const on = parseSampler("parentbased_always_on", undefined, warnings);
    expect(sampled(on, id("0"), remote(0))).toBe(false);
    expect(sampled(on, id("0"), null)).toBe(true);
    const off = parseSampler("parentbased_always_off", undefined, warnings);
    expect(sampled(off, id("0"), remote(1))).toBe(true);
    expect(sampled(off, id("0"), null)).toBe(false);
    const ratio = parseSampler("parentbased_traceidratio", "0", warnings);
    expect(sampled(ratio, id("0000000000000"), remote(1))).toBe(true);
    expect(sampled(ratio, id("0000000000000"), null)).toBe(false);
  });

  test("a bad ratio falls back to 1 with a warning", () => {
    const w: string[] = [];
    expect(parseSampler("traceidratio", "1.5", w).ratio).toBe(1);
    expect(w).toHaveLength(1);
  });
});
