/**
 * OpenTelemetry for parley: a SERVER span per request, a CLIENT span per upstream call, the GenAI
 * metrics, exported over OTLP/HTTP (protobuf or JSON) to any collector.
 *
 * Implementation: our own OTLP encoder, not the OpenTelemetry JS SDK. Measured with
 * `bun scripts/bench/otel.ts` (Bun 1.4.5, the shared 2-core machine; a request = a SERVER span and
 * two CLIENT spans with contract 24's attributes and the three histograms; medians of 5 runs):
 *
 *                         span calls, request thread   CPU with export   binary      start-up
 *   parley's encoder      2.3-2.7 µs                   19-25 µs          +84 KiB     +0-2 ms
 *   OTel JS SDK 2.x/3.x   31-34 µs                     68-76 µs          +3,048 KiB  +12-15 ms
 *   off (either)          0.3 µs (the call sites' own objects)
 *
 * The SDK's generality (context managers, span processors, views, attribute limits, its
 * protobuf runtime) costs ten times the work on the request's thread, three times the CPU in all,
 * and 3 MB in a binary of which parley uses a fixed set of attributes and three histograms.
 *
 * Off unless an OTLP endpoint is set: then `createTelemetry` returns TELEMETRY_OFF, whose spans
 * are one constant no-op object.
 */
import { type OtelConfig, readOtelConfig } from "./config.ts";
import { MetricExporter, type OtelStats, SpanExporter } from "./exporter.ts";
import { GenAiMetrics } from "./metrics.ts";
import type { Attributes } from "./names.ts";
import type { Origin } from "./otlp-proto.ts";
import { sampled } from "./sampler.ts";
import { NO_TRACE, type Trace } from "./outgoing.ts";
import { NOOP_SPAN, RecordingSpan, SPAN_KIND_SERVER, type Span, type SpanData, type SpanSink } from "./span.ts";
import { parseTraceparent, randomHex } from "./traceparent.ts";

export type { OtelStats } from "./exporter.ts";
export { ATTR, GENAI_SEMCONV_VERSION, providerName, type AttributeName, type Attributes } from "./names.ts";
export { NOOP_SPAN, type Span } from "./span.ts";
export { NO_TRACE, traced, withTrace, type Trace } from "./outgoing.ts";

export interface Telemetry {
  readonly enabled: boolean;
  /** Whether prompt and reply text may be exported; build them for `span.messages` only then. */
  readonly captureContent: boolean;
  /** The SERVER span of one request; `traceparent` is the client's header (the parent), if any. */
  startServer(traceparent: string | null | undefined, attrs?: Attributes): Span;
  /** Counters for /metrics (parley_otel_dropped_spans_total and its kin). */
  stats(): Readonly<OtelStats>;
  /** Flushes what is pending and stops the timers. */
  shutdown(): Promise<void>;
}

const ZERO: OtelStats = Object.freeze({ droppedSpans: 0, failedSpans: 0, exportedSpans: 0, failedMetricExports: 0 });

export const TELEMETRY_OFF: Telemetry = Object.freeze({
  enabled: false,
  captureContent: false,
  startServer: () => NOOP_SPAN,
  stats: () => ZERO,
  shutdown: async () => {},
});

export function createTelemetry(env: Record<string, string | undefined>, version: string): { telemetry: Telemetry; warnings: string[] } {
  const { config, warnings } = readOtelConfig(env, version);
  return { telemetry: config ? new LiveTelemetry(config, version) : TELEMETRY_OFF, warnings };
}

/**
 * A request's trace: its SERVER span (the client's `traceparent` its parent) and the client's trace
 * headers. With OpenTelemetry off, only a client that sent a `traceparent` gets one (forwarded upstream unchanged).
 */
export function startTrace(telemetry: Telemetry, headers: Headers): Trace {
  const traceparent = headers.get("traceparent") ?? undefined;
  if (!telemetry.enabled && traceparent === undefined) return NO_TRACE;
  const tracestate = headers.get("tracestate") ?? undefined;
  return { span: telemetry.startServer(traceparent), traceparent, tracestate };
}

class LiveTelemetry implements Telemetry, SpanSink {
  readonly enabled = true;
  readonly captureContent: boolean;
  readonly tracing: boolean;
  private readonly counters: OtelStats = { ...ZERO };
  private readonly metrics: GenAiMetrics | null;
  private readonly spans: SpanExporter | null;
  private readonly metricExporter: MetricExporter | null;

  constructor(private readonly config: OtelConfig, version: string) {
    const origin: Origin = { resource: config.resource, scope: { name: "parley", version } };
    this.captureContent = config.captureContent;
    this.tracing = config.traces !== null;
    this.spans = config.traces ? new SpanExporter(config.traces, origin, config, this.counters) : null;
    this.metrics = config.metrics ? new GenAiMetrics() : null;
    this.metricExporter = config.metrics && this.metrics ? new MetricExporter(config.metrics, origin, this.metrics, config, this.counters) : null;
  }

  startServer(traceparent: string | null | undefined, attrs?: Attributes): Span {
    const parent = parseTraceparent(traceparent);
    const traceId = parent?.traceId ?? randomHex(16);
    const sample = this.tracing && sampled(this.config.sampler, traceId, parent);
    const span = new RecordingSpan(this, SPAN_KIND_SERVER, traceId, parent?.spanId, sample, parent !== null);
    return attrs ? span.setAll(attrs) : span;
  }

  ended(span: SpanData): void {
    this.metrics?.observe(span);
    if (span.sampled) this.spans?.add(span);
  }

  stats(): Readonly<OtelStats> {
    return { ...this.counters };
  }

  async shutdown(): Promise<void> {
    await Promise.all([this.spans?.shutdown(), this.metricExporter?.shutdown()]);
  }
}
