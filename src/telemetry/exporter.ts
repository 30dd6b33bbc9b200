/**
 * Export off the request path. Ended spans wait in a bounded queue (a full queue drops the span and
 * counts it) and go out in batches every OTEL_BSP_SCHEDULE_DELAY ms, or sooner once a batch is full;
 * the metrics go out every OTEL_METRIC_EXPORT_INTERVAL ms. One export per signal is in flight at a
 * time and each has a deadline, so a slow or dead collector costs a request nothing: it only fills
 * the queue, and what it loses is counted.
 */
import type { OtelConfig, SignalConfig } from "./config.ts";
import type { GenAiMetrics } from "./metrics.ts";
import { metricsToJson, tracesToJson } from "./otlp-json.ts";
import { type Origin, metricsToProto, tracesToProto } from "./otlp-proto.ts";
import { type SpanData, now } from "./span.ts";

export interface OtelStats {
  /** Spans dropped because the queue was full. */
  droppedSpans: number;
  /** Spans in batches the collector refused, or that failed or timed out on the way. */
  failedSpans: number;
  exportedSpans: number;
  failedMetricExports: number;
}

export class SpanExporter {
  private queue: SpanData[] = [];
  private inFlight: Promise<void> | null = null;
  private soon: ReturnType<typeof setTimeout> | undefined;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly signal: SignalConfig,
    private readonly origin: Origin,
    private readonly config: OtelConfig,
    private readonly stats: OtelStats,
  ) {
    this.timer = setInterval(() => this.exportNext(), Math.max(config.scheduleDelayMs, 1));
    this.timer.unref();
  }

  add(span: SpanData): void {
    if (this.queue.length >= this.config.maxQueueSize) {
      this.stats.droppedSpans++;
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= this.config.maxExportBatchSize && !this.soon && !this.inFlight) {
      this.soon = setTimeout(() => this.exportNext(), 0);
      this.soon.unref();
    }
  }

  /**
   * Stops the timer and sends what is queued. The batches go out together, so a slow collector
   * holds shutdown for one export deadline, not one per batch.
   */
  async shutdown(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.soon);
    const batches: Promise<void>[] = [];
    while (this.queue.length) batches.push(this.send(this.queue.splice(0, this.config.maxExportBatchSize)));
    await Promise.all([this.inFlight, ...batches]);
  }

  private exportNext(): void {
    this.soon = undefined;
    if (this.inFlight || !this.queue.length) return;
    this.inFlight = this.send(this.queue.splice(0, this.config.maxExportBatchSize)).finally(() => {
      this.inFlight = null;
      if (this.queue.length >= this.config.maxExportBatchSize) this.exportNext();
    });
  }

  private async send(batch: SpanData[]): Promise<void> {
    const body = this.signal.protocol === "http/json" ? tracesToJson(this.origin, batch) : tracesToProto(this.origin, batch);
    const ok = await post(this.signal, body, Math.min(this.signal.timeoutMs, this.config.exportTimeoutMs));
    if (ok) this.stats.exportedSpans += batch.length;
    else this.stats.failedSpans += batch.length;
  }
}

export class MetricExporter {
  private inFlight: Promise<void> | null = null;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly signal: SignalConfig,
    private readonly origin: Origin,
    private readonly metrics: GenAiMetrics,
    private readonly config: OtelConfig,
    private readonly stats: OtelStats,
  ) {
    this.timer = setInterval(() => {
      this.inFlight ??= this.send().finally(() => (this.inFlight = null));
    }, config.metricIntervalMs);
    this.timer.unref();
  }

  async shutdown(): Promise<void> {
    clearInterval(this.timer);
    // The last counts go out beside an export still in flight: they are cumulative, so either may land.
    await Promise.all([this.inFlight, this.send()]);
  }

  private async send(): Promise<void> {
    if (!this.metrics.all.some((h) => h.points.length)) return;
    const t = now();
    const body = this.signal.protocol === "http/json" ? metricsToJson(this.origin, this.metrics, t) : metricsToProto(this.origin, this.metrics, t);
    if (!(await post(this.signal, body, Math.min(this.signal.timeoutMs, this.config.metricTimeoutMs)))) this.stats.failedMetricExports++;
  }
}

async function post(signal: SignalConfig, body: string | Uint8Array, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetch(signal.url, {
      method: "POST",
      headers: { ...signal.headers, "content-type": signal.protocol === "http/json" ? "application/json" : "application/x-protobuf" },
      body: body as BodyInit,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}
