// The OpenTelemetry JS SDK doing the same work: tracer and meter providers, batch span processor,
// periodic metric reader, the OTLP/HTTP protobuf exporters, the W3C propagator.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, defaultTextMapSetter, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TracerProvider } from "@opentelemetry/sdk-trace";
import { drive } from "./drive.ts";

await drive((url) => {
  const resource = resourceFromAttributes({ "service.name": "parley", "service.version": "bench" });
  const tracerProvider = new TracerProvider({
    resource,
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${url}/v1/traces` }), scheduledDelayMillis: 200 })],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: `${url}/v1/metrics` }), exportIntervalMillis: 1000 })],
  });
  const tracer = tracerProvider.getTracer("parley", "bench");
  const meter = meterProvider.getMeter("parley", "bench");
  const tokens = meter.createHistogram("gen_ai.client.token.usage", { unit: "{token}", advice: { explicitBucketBoundaries: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864] } });
  const duration = meter.createHistogram("gen_ai.client.operation.duration", { unit: "s", advice: { explicitBucketBoundaries: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92] } });
  const ttft = meter.createHistogram("gen_ai.server.time_to_first_token", { unit: "s", advice: { explicitBucketBoundaries: [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0] } });
  const propagator = new W3CTraceContextPropagator();
  return {
    request() {
      const t0 = performance.now();
      const parent = propagator.extract(ROOT_CONTEXT, { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" }, defaultTextMapGetter);
      const server = tracer.startSpan("chat gpt-4o", { kind: SpanKind.SERVER, attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "parley.route": "default", "parley.key": "main", "parley.session": "s-1" } }, parent);
      const ctx = trace.setSpan(ROOT_CONTEXT, server);
      for (const upstream of ["alpha", "beta"]) {
        const c0 = performance.now();
        const client = tracer.startSpan("chat gpt-4o", { kind: SpanKind.CLIENT, attributes: { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o", "parley.upstream": upstream, "server.address": "127.0.0.1", "server.port": 8080, "gen_ai.request.max_tokens": 256, "gen_ai.request.temperature": 0.7 } }, ctx);
        const carrier: Record<string, string> = {};
        propagator.inject(trace.setSpan(ROOT_CONTEXT, client), carrier, defaultTextMapSetter);
        if (!carrier.traceparent) throw new Error("no traceparent");
        client.setAttributes({ "gen_ai.response.model": "gpt-4o-2024-08-06", "gen_ai.response.id": "chatcmpl-1", "gen_ai.response.finish_reasons": ["stop"], "gen_ai.usage.input_tokens": 1200, "gen_ai.usage.output_tokens": 42, "gen_ai.usage.cache_read.input_tokens": 1000, "gen_ai.usage.cache_creation.input_tokens": 0 });
        client.setStatus({ code: SpanStatusCode.UNSET });
        client.end();
        const attrs = { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06" };
        duration.record((performance.now() - c0) / 1000, { ...attrs, "server.address": "127.0.0.1" });
        tokens.record(1200, { ...attrs, "gen_ai.token.type": "input" });
        tokens.record(42, { ...attrs, "gen_ai.token.type": "output" });
      }
      server.setAttributes({ "gen_ai.response.model": "gpt-4o-2024-08-06", "gen_ai.provider.name": "openai", "parley.upstream": "beta", "parley.cost_usd": 0.0012 });
      server.end();
      ttft.record((performance.now() - t0) / 1000, { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06" });
    },
    async shutdown() {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
});
