/**
 * The few Prometheus metrics parley exposes, kept by hand: prom-client would add a dependency tree,
 * a registry and label validation on every increment to the hot path, for what is a handful of
 * Maps of numbers rendered as text on a scrape.
 */

import { droppedBetas } from "../providers/dropped-betas.ts";
import type { OtelStats } from "../telemetry/index.ts";

/** A metric keeps at most this many label sets; more (model ids come from clients) fold into "_other". */
const MAX_SERIES = 1000;
const OTHER = "_other";

type Labels = readonly string[];

interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  labels: readonly string[];
  render(lines: string[]): void;
}

function seriesKey(values: Labels, size: number, has: (key: string) => boolean): string {
  const key = values.join("\u0000");
  if (has(key) || size < MAX_SERIES) return key;
  return values.map(() => OTHER).join("\u0000");
}

function labelText(names: readonly string[], key: string, extra = ""): string {
  const values = key === "" && names.length === 0 ? [] : key.split("\u0000");
  const pairs = names.map((name, i) => `${name}="${escape(values[i] ?? "")}"`);
  if (extra) pairs.push(extra);
  return pairs.length ? `{${pairs.join(",")}}` : "";
}

const escape = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

function number(value: number): string {
  if (value === Infinity) return "+Inf";
  return Number.isInteger(value) ? String(value) : String(Math.round(value * 1e9) / 1e9);
}

/** One label set's number; callers that count the same series often keep the cell. */
export interface Cell {
  value: number;
}

export class Counter implements Family {
  readonly type: "counter" | "gauge" = "counter";
  private readonly cells = new Map<string, Cell>();
  constructor(readonly name: string, readonly help: string, readonly labels: readonly string[]) {}

  cell(values: Labels): Cell {
    const key = seriesKey(values, this.cells.size, (k) => this.cells.has(k));
    let cell = this.cells.get(key);
    if (!cell) this.cells.set(key, (cell = { value: 0 }));
    return cell;
  }

  inc(values: Labels, by = 1): void {
    this.cell(values).value += by;
  }

  render(lines: string[]): void {
    for (const [key, { value }] of this.cells) lines.push(`${this.name}${labelText(this.labels, key)} ${number(value)}`);
  }
}

export class Gauge extends Counter {
  override readonly type = "gauge" as const;
}

export interface HistogramSeries {
  observe(value: number): void;
}

export class Histogram implements Family {
  readonly type = "histogram" as const;
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(readonly name: string, readonly help: string, readonly labels: readonly string[], private readonly buckets: readonly number[]) {}

  cell(values: Labels): HistogramSeries {
    const key = seriesKey(values, this.series.size, (k) => this.series.has(k));
    let entry = this.series.get(key);
    if (!entry) this.series.set(key, (entry = { counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    const { buckets } = this;
    const series = entry;
    return {
      observe(value: number) {
        // Counted in the first bucket it fits; rendering makes the counts cumulative.
        for (let i = 0; i < buckets.length; i++) {
          if (value <= buckets[i]!) {
            series.counts[i]!++;
            break;
          }
        }
        series.sum += value;
        series.count++;
      },
    };
  }

  observe(values: Labels, value: number): void {
    this.cell(values).observe(value);
  }

  render(lines: string[]): void {
    for (const [key, { counts, sum, count }] of this.series) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += counts[i]!;
        lines.push(`${this.name}_bucket${labelText(this.labels, key, `le="${number(bound)}"`)} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket${labelText(this.labels, key, 'le="+Inf"')} ${count}`);
      lines.push(`${this.name}_sum${labelText(this.labels, key)} ${number(sum)}`);
      lines.push(`${this.name}_count${labelText(this.labels, key)} ${count}`);
    }
  }
}

/** The cells one kind of completion (endpoint, status, provider, model) counts into. */
export interface AnswerCells {
  requests: Cell;
  input: Cell;
  output: Cell;
  cacheRead: Cell;
  cacheWrite: Cell;
  cost: Cell;
  retries: Cell;
  firstByte: HistogramSeries;
  added: HistogramSeries;
}

/** Betas not passed on to an upstream (contract 26), as the providers counted them. */
const betasDropped: Family = {
  name: "parley_betas_dropped_total", help: "anthropic-beta values not passed on to an upstream that does not take them, by upstream and beta.", type: "counter", labels: ["upstream", "beta"],
  render(lines) {
    for (const { upstream, beta, count } of droppedBetas()) lines.push(`${this.name}${labelText(this.labels, `${upstream}\u0000${beta}`)} ${count}`);
  },
};

/** parley's metrics; `render` is the text a Prometheus scrape gets. */
export function createMetrics() {
  const requests = new Counter("parley_requests_total", "Chat completions by endpoint, status, provider and the model that answered.", ["endpoint", "status", "provider", "model"]);
  const addedLatency = new Histogram(
    "parley_added_latency_seconds", "Time parley itself spent on a completion before its answer was ready: total minus the upstream's.", ["endpoint"],
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  );
  const upstreamFirstByte = new Histogram(
    "parley_upstream_first_byte_seconds", "Time from the first upstream call to the upstream's answer (a stream's first event), retries included.", ["provider"],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  );
  const tokens = new Counter("parley_tokens_total", "Tokens by provider, model and kind (input, output, cache_read, cache_write).", ["provider", "model", "type"]);
  const cost = new Counter("parley_cost_usd_total", "US dollars spent, for models with a price.", ["model"]);
  const retries = new Counter("parley_upstream_retries_total", "Upstream calls after the first (retries and fallbacks).", ["provider"]);
  const rejected = new Counter("parley_rate_limited_total", "Requests refused by parley's own limits: rate_limit (RATE_LIMIT_RPM) or budget.", ["reason"]);
  const streams = new Gauge("parley_streams_in_flight", "Streamed completions being sent right now.", ["endpoint"]);
  const cacheRead = new Counter("parley_cache_read_tokens_total", "Prompt tokens read from the upstream's prompt cache, by upstream and route (contract 22).", ["upstream", "route"]);
  const cacheWrite = new Counter("parley_cache_write_tokens_total", "Prompt tokens written to the upstream's prompt cache, by upstream and route.", ["upstream", "route"]);
  const usageDropped = new Counter("parley_usage_dropped_total", "Usage records dropped: the database was down and USAGE_BUFFER_MAX records already waited.", []);
  usageDropped.cell([]);
  const families: Family[] = [requests, addedLatency, upstreamFirstByte, tokens, cost, retries, rejected, streams, cacheRead, cacheWrite, betasDropped, usageDropped];

  // endpoint -> status -> provider -> model -> cells, so that a completion builds no label key.
  const answers = new Map<string, Map<number, Map<string, Map<string, AnswerCells>>>>();
  let cached = 0;
  const cellsFor = (endpoint: string, status: number, provider: string, model: string): AnswerCells => ({
    requests: requests.cell([endpoint, String(status), provider, model]),
    input: tokens.cell([provider, model, "input"]),
    output: tokens.cell([provider, model, "output"]),
    cacheRead: tokens.cell([provider, model, "cache_read"]),
    cacheWrite: tokens.cell([provider, model, "cache_write"]),
    cost: cost.cell([model]),
    retries: retries.cell([provider]),
    firstByte: upstreamFirstByte.cell([provider]),
    added: addedLatency.cell([endpoint]),
  });

  return {
    requests, addedLatency, upstreamFirstByte, tokens, cost, retries, rejected, streams, cacheRead, cacheWrite, usageDropped,
    /** A completion that read or wrote the prompt cache (only those: the others look up nothing here). */
    cache(upstream: string, route: string, read: number, written: number): void {
      if (read) cacheRead.inc([upstream, route], read);
      if (written) cacheWrite.inc([upstream, route], written);
    },
    answer(endpoint: string, status: number, provider: string, model: string): AnswerCells {
      const byStatus = answers.get(endpoint) ?? answers.set(endpoint, new Map()).get(endpoint)!;
      const byProvider = byStatus.get(status) ?? byStatus.set(status, new Map()).get(status)!;
      const byModel = byProvider.get(provider) ?? byProvider.set(provider, new Map()).get(provider)!;
      const found = byModel.get(model);
      if (found) return found;
      const cells = cellsFor(endpoint, status, provider, model);
      // Model ids come from clients: past this many, cells are looked up each time (and fold into "_other").
      if (cached++ < MAX_SERIES) byModel.set(model, cells);
      return cells;
    },
    render(): string {
      const lines: string[] = [];
      for (const family of families) {
        lines.push(`# HELP ${family.name} ${family.help}`, `# TYPE ${family.name} ${family.type}`);
        family.render(lines);
      }
      return `${lines.join("\n")}\n`;
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** OpenTelemetry's export counters (contract 24: a slow or dead collector's losses are counted here). */
export function otelLines(stats: OtelStats): string {
  return [
    "# HELP parley_otel_dropped_spans_total Spans not exported: queue_full (the collector is slower than the traffic) or export_failed (refused, failed or timed out).",
    "# TYPE parley_otel_dropped_spans_total counter",
    `parley_otel_dropped_spans_total{reason="queue_full"} ${stats.droppedSpans}`,
    `parley_otel_dropped_spans_total{reason="export_failed"} ${stats.failedSpans}`,
    "# HELP parley_otel_exported_spans_total Spans the collector accepted.",
    "# TYPE parley_otel_exported_spans_total counter",
    `parley_otel_exported_spans_total ${stats.exportedSpans}`,
    "# HELP parley_otel_failed_metric_exports_total Metric exports refused, failed or timed out (the next one carries their counts).",
    "# TYPE parley_otel_failed_metric_exports_total counter",
    `parley_otel_failed_metric_exports_total ${stats.failedMetricExports}`,
    "",
  ].join("\n");
}
