/**
 * The few Prometheus metrics parley exposes, kept by hand: prom-client would add a dependency tree,
 * a registry and label validation on every increment to the hot path, for what is a handful of
 * Maps of numbers rendered as text on a scrape.
 */

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

export class Counter implements Family {
  readonly type: "counter" | "gauge" = "counter";
  private readonly values = new Map<string, number>();
  constructor(readonly name: string, readonly help: string, readonly labels: readonly string[]) {}

  inc(values: Labels, by = 1): void {
    const key = seriesKey(values, this.values.size, (k) => this.values.has(k));
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }

  render(lines: string[]): void {
    for (const [key, value] of this.values) lines.push(`${this.name}${labelText(this.labels, key)} ${number(value)}`);
  }
}

export class Gauge extends Counter {
  override readonly type = "gauge" as const;
}

export class Histogram implements Family {
  readonly type = "histogram" as const;
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(readonly name: string, readonly help: string, readonly labels: readonly string[], private readonly buckets: readonly number[]) {}

  observe(values: Labels, value: number): void {
    const key = seriesKey(values, this.series.size, (k) => this.series.has(k));
    let entry = this.series.get(key);
    if (!entry) this.series.set(key, (entry = { counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    // Counted in the first bucket it fits; rendering makes the counts cumulative.
    const at = this.buckets.findIndex((bound) => value <= bound);
    if (at >= 0) entry.counts[at]!++;
    entry.sum += value;
    entry.count++;
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
  const families: Family[] = [requests, addedLatency, upstreamFirstByte, tokens, cost, retries, rejected, streams];

  return {
    requests, addedLatency, upstreamFirstByte, tokens, cost, retries, rejected, streams,
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
