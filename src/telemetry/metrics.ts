/**
 * The three GenAI histograms, aggregated in process with cumulative temporality (the OTLP
 * default): an export that is lost loses no counts, the next one carries them. Series are few
 * (operation x provider x model x token type), so they are kept for the life of the process.
 */
import { ATTR, type AttributeValue, BUCKETS, METRIC } from "./names.ts";
import { SPAN_KIND_CLIENT, SPAN_KIND_SERVER, STATUS_ERROR, type SpanData } from "./span.ts";

export interface HistogramPoint {
  readonly attrs: readonly (readonly [string, AttributeValue])[];
  readonly counts: number[];
  count: number;
  sum: number;
  min: number;
  max: number;
}

export class Histogram {
  readonly points = new Map<string, HistogramPoint>();

  constructor(
    readonly name: keyof typeof BUCKETS,
    readonly unit: string,
    readonly description: string,
  ) {}

  get bounds(): readonly number[] {
    return BUCKETS[this.name];
  }

  record(value: number, attrs: (readonly [string, AttributeValue | undefined])[]): void {
    const present = attrs.filter((a): a is readonly [string, AttributeValue] => a[1] !== undefined);
    const key = present.map((a) => a[1]).join("\u0001") + "\u0002" + present.map((a) => a[0]).join("\u0001");
    let point = this.points.get(key);
    if (!point) {
      point = { attrs: present, counts: new Array(this.bounds.length + 1).fill(0), count: 0, sum: 0, min: value, max: value };
      this.points.set(key, point);
    }
    let i = 0;
    const bounds = this.bounds;
    while (i < bounds.length && value > bounds[i]!) i++;
    point.counts[i]!++;
    point.count++;
    point.sum += value;
    if (value < point.min) point.min = value;
    if (value > point.max) point.max = value;
  }
}

export class GenAiMetrics {
  readonly startMs = performance.timeOrigin + performance.now();
  readonly tokenUsage = new Histogram(METRIC.tokenUsage, "{token}", "Number of input and output tokens used.");
  readonly duration = new Histogram(METRIC.operationDuration, "s", "GenAI operation duration.");
  readonly timeToFirstToken = new Histogram(METRIC.timeToFirstToken, "s", "Time to generate first token for successful responses.");

  get all(): Histogram[] {
    return [this.tokenUsage, this.duration, this.timeToFirstToken];
  }

  /**
   * A CLIENT span is one call to an upstream: its duration and the tokens it billed. A SERVER span
   * is one request to parley: its time to first token, when it succeeded.
   */
  observe(span: SpanData): void {
    const a = span.attrs;
    const common = [
      [ATTR.operation, a.get(ATTR.operation)],
      [ATTR.provider, a.get(ATTR.provider)],
      [ATTR.requestModel, a.get(ATTR.requestModel)],
      [ATTR.responseModel, a.get(ATTR.responseModel)],
    ] as const;
    if (span.kind === SPAN_KIND_SERVER) {
      if (span.firstTokenMs && span.statusCode !== STATUS_ERROR) this.timeToFirstToken.record((span.firstTokenMs - span.startMs) / 1000, [...common]);
      return;
    }
    if (span.kind !== SPAN_KIND_CLIENT) return;
    this.duration.record((span.endMs - span.startMs) / 1000, [...common, [ATTR.serverAddress, a.get(ATTR.serverAddress)], [ATTR.errorType, a.get(ATTR.errorType)]]);
    const input = a.get(ATTR.inputTokens);
    const output = a.get(ATTR.outputTokens);
    if (typeof input === "number") this.tokenUsage.record(input, [...common, [ATTR.tokenType, "input"]]);
    if (typeof output === "number") this.tokenUsage.record(output, [...common, [ATTR.tokenType, "output"]]);
  }
}
