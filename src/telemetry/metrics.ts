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
  readonly points: HistogramPoint[] = [];
  // Series looked up by their values, one Map per attribute: no key string is built per record.
  private readonly series = new Map<AttributeValue | undefined, unknown>();

  constructor(
    readonly name: keyof typeof BUCKETS,
    readonly unit: string,
    readonly description: string,
  ) {}

  get bounds(): readonly number[] {
    return BUCKETS[this.name];
  }

  /** `values` line up with `names`; an undefined value leaves its attribute out of the series. */
  record(value: number, names: readonly string[], values: readonly (AttributeValue | undefined)[]): void {
    // Each histogram is recorded from one place with one list of names, so the values alone key a series.
    let node = this.series;
    const last = values.length - 1;
    for (let i = 0; i < last; i++) {
      let next = node.get(values[i]) as Map<AttributeValue | undefined, unknown> | undefined;
      if (!next) node.set(values[i], (next = new Map()));
      node = next;
    }
    let point = node.get(values[last]) as HistogramPoint | undefined;
    if (!point) {
      const attrs: (readonly [string, AttributeValue])[] = [];
      values.forEach((v, i) => v !== undefined && attrs.push([names[i]!, v]));
      point = { attrs, counts: new Array(this.bounds.length + 1).fill(0), count: 0, sum: 0, min: value, max: value };
      node.set(values[last], point);
      this.points.push(point);
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
    const op = a.get(ATTR.operation);
    const provider = a.get(ATTR.provider);
    const model = a.get(ATTR.requestModel);
    const answered = a.get(ATTR.responseModel);
    if (span.kind === SPAN_KIND_SERVER) {
      if (span.firstTokenMs && span.statusCode !== STATUS_ERROR) this.timeToFirstToken.record((span.firstTokenMs - span.startMs) / 1000, COMMON, [op, provider, model, answered]);
      return;
    }
    if (span.kind !== SPAN_KIND_CLIENT) return;
    this.duration.record((span.endMs - span.startMs) / 1000, DURATION, [op, provider, model, answered, a.get(ATTR.serverAddress), a.get(ATTR.errorType)]);
    const input = a.get(ATTR.inputTokens);
    const output = a.get(ATTR.outputTokens);
    if (typeof input === "number") this.tokenUsage.record(input, TOKENS, [op, provider, model, answered, "input"]);
    if (typeof output === "number") this.tokenUsage.record(output, TOKENS, [op, provider, model, answered, "output"]);
  }
}

const COMMON = [ATTR.operation, ATTR.provider, ATTR.requestModel, ATTR.responseModel];
const DURATION = [...COMMON, ATTR.serverAddress, ATTR.errorType];
const TOKENS = [...COMMON, ATTR.tokenType];
