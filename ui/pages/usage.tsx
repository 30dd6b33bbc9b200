import { useEffect, useMemo, useState } from "react";
import { call, type Answer } from "../api.ts";
import { cost, num, pct } from "../format.ts";
import { Plot, type Series } from "../plot.tsx";
import { Empty, Problem, Table, type Column } from "../ui.tsx";

/** A row of GET /v1/usage; with `bucket=`, `start` is the bucket's start (Unix seconds). */
export interface UsageRow {
  start?: number;
  group: string | null;
  requests: number;
  errors?: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number | null;
}
interface Usage { data: UsageRow[] }

const RANGES = { "1h": ["hour", 3600], "24h": ["hour", 3600], "7d": ["hour", 3600], "30d": ["day", 86400] } as const;
const BY = ["model", "key", "upstream", "route"] as const;
const SHARE: [number, number] = [0, 1];
// Module-level, so a plot is drawn again only when its data change.
const percent = (n: number) => pct(n);
const money = (n: number) => cost(n);
const count = (n: number) => (Number.isInteger(n) ? num(n) : "");
const tokens = (r: UsageRow) => r.input_tokens + r.output_tokens + r.cache_read_tokens + r.cache_write_tokens;
const groupName = (g: string | null) => g ?? "(none)";

const COLUMNS: Column<UsageRow>[] = [
  { label: "Group", value: (r) => groupName(r.group) },
  { label: "Requests", value: (r) => num(r.requests), numeric: true },
  { label: "Input tokens", value: (r) => num(r.input_tokens), numeric: true },
  { label: "Output tokens", value: (r) => num(r.output_tokens), numeric: true },
  { label: "Cache read", value: (r) => num(r.cache_read_tokens), numeric: true },
  { label: "Cache write", value: (r) => num(r.cache_write_tokens), numeric: true },
  { label: "Cost", value: (r) => cost(r.cost_usd), numeric: true },
];

const REQUEST_COLUMNS: Column<UsageRow>[] = [COLUMNS[0]!, COLUMNS[1]!];
const CACHE_COLUMNS: Column<UsageRow>[] = [
  COLUMNS[0]!,
  { label: "Input (all)", value: (r) => num(r.input_tokens + r.cache_read_tokens + r.cache_write_tokens), numeric: true },
  COLUMNS[4]!,
  { label: "Cache-read share", value: (r) => pct(r.cache_read_tokens / (r.input_tokens + r.cache_read_tokens + r.cache_write_tokens || 1)), numeric: true },
];

function csv(rows: UsageRow[]): string {
  const head = ["bucket_start", "group", "requests", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd"];
  const cell = (v: unknown) => (v === null || v === undefined ? "" : /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  const lines = rows.map((r) => [r.start === undefined ? "" : new Date(r.start * 1000).toISOString(), r.group, r.requests, r.input_tokens, r.output_tokens, r.cache_read_tokens, r.cache_write_tokens, r.cost_usd].map(cell).join(","));
  return [head.join(","), ...lines].join("\n") + "\n";
}

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  const a = Object.assign(document.createElement("a"), { href: url, download: name });
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The bucket times, every bucket of the range (empty ones at 0), and one series per group. */
function shape(rows: UsageRow[], since: number, step: number, value: (r: UsageRow) => number) {
  const first = Math.floor(since / step) * step;
  const times: number[] = [];
  for (let t = first; t <= Date.now() / 1000; t += step) times.push(t);
  const groups = [...new Set(rows.map((r) => groupName(r.group)))];
  const series: Series[] = groups.map((label) => ({ label, values: times.map(() => 0) }));
  for (const r of rows) {
    const i = times.indexOf(Math.floor(r.start! / step) * step);
    if (i >= 0) series[groups.indexOf(groupName(r.group))]!.values[i]! += value(r);
  }
  return { times, series };
}

export function Usage(_: { admin: boolean }) {
  const [range, setRange] = useState<keyof typeof RANGES>("24h");
  const [by, setBy] = useState<(typeof BY)[number]>("model");
  const [metric, setMetric] = useState<"cost" | "tokens">("cost");
  const [totals, setTotals] = useState<Answer<Usage>>();
  const [buckets, setBuckets] = useState<Answer<Usage>>();
  const [since, setSince] = useState(0);
  useEffect(() => {
    setSince(Math.floor(Date.now() / 1000) - (range === "1h" ? 3600 : range === "24h" ? 86400 : range === "7d" ? 7 * 86400 : 30 * 86400));
    void call<Usage>(`/v1/usage?since=${range}&by=${by}`).then(setTotals);
    void call<Usage>(`/v1/usage?since=${range}&by=${by}&bucket=${RANGES[range][0]}`).then(setBuckets);
  }, [range, by]);
  const plots = useMemo(() => {
    if (!buckets?.ok) return undefined;
    const rows = buckets.data.data;
    const step = RANGES[range][1];
    const spend = shape(rows, since, step, metric === "cost" ? (r) => r.cost_usd ?? 0 : tokens);
    const requests = shape(rows, since, step, (r) => r.requests);
    const all = (f: (r: UsageRow) => number) => shape(rows, since, step, f).series.reduce((sum, s) => sum.map((v, i) => v + (s.values[i] ?? 0)), requests.times.map(() => 0));
    const cacheRead = all((r) => r.cache_read_tokens);
    const input = all((r) => r.input_tokens + r.cache_read_tokens + r.cache_write_tokens);
    const share: Series = { label: "cache-read share", values: input.map((v, i) => (v ? cacheRead[i]! / v : null)) };
    const req = all((r) => r.requests);
    const errorRate: Series = { label: "error rate", values: all((r) => r.errors ?? 0).map((e, i) => (req[i] ? e / req[i]! : null)) };
    return { spend, requests, share, errorRate };
  }, [buckets, metric, range, since]);
  if (!totals) return <p className="loading">Loading…</p>;
  if (!totals.ok) return <Problem answer={totals} what="usage" />;
  const rows = totals.data.data;
  return (
    <section>
      <div className="toolbar">
        <label htmlFor="usage-range">Range</label>
        <select id="usage-range" value={range} onChange={(e) => setRange(e.target.value as keyof typeof RANGES)}>
          {Object.keys(RANGES).map((r) => <option key={r} value={r}>last {r}</option>)}
        </select>
        <label htmlFor="usage-by">Stacked by</label>
        <select id="usage-by" value={by} onChange={(e) => setBy(e.target.value as (typeof BY)[number])}>
          {BY.map((b) => <option key={b}>{b}</option>)}
        </select>
        <label htmlFor="usage-metric">Show</label>
        <select id="usage-metric" value={metric} onChange={(e) => setMetric(e.target.value as "cost" | "tokens")}>
          <option value="cost">cost</option>
          <option value="tokens">tokens</option>
        </select>
        <button type="button" onClick={() => download(`parley-usage-${range}-by-${by}.csv`, csv(buckets?.ok && plots ? buckets.data.data : rows))}>Export CSV</button>
      </div>
      {rows.length === 0 ? (
        <Empty>
          <p><strong>No usage in the last {range}.</strong> Every request through the gateway is counted here: tokens, cost, cache reads.</p>
          <p>Point a client at <code>{location.origin}</code> with a key (docs/clients.md), or send one request: <code>curl {location.origin}/v1/chat/completions -H "Authorization: Bearer $API_KEY" -d '{`{"model":"mock","messages":[{"role":"user","content":"hi"}]}`}'</code></p>
        </Empty>
      ) : (
        <>
          {plots ? (
            <>
              <h2>{metric === "cost" ? "Cost" : "Tokens"} by {by}</h2>
              <Plot label={`${metric} by ${by} over the last ${range}`} times={plots.spend.times} series={plots.spend.series} stacked unit={metric === "cost" ? money : count} />
              <Table caption={`Usage by ${by}, last ${range}`} rows={rows} rowKey={(r) => groupName(r.group)} columns={COLUMNS} />
              <h2>Requests by {by}</h2>
              <Plot label={`requests by ${by} over the last ${range}`} times={plots.requests.times} series={plots.requests.series} stacked unit={count} />
              <h2>Error rate</h2>
              <Plot label="error rate" times={plots.requests.times} series={[plots.errorRate]} unit={percent} range={SHARE} />
              <Table caption={`Requests by ${by}, last ${range}`} rows={rows} rowKey={(r) => groupName(r.group)} columns={REQUEST_COLUMNS} />
              <h2>Cache-read share of input</h2>
              <Plot label="share of input tokens read from the prompt cache" times={plots.requests.times} series={[plots.share]} unit={percent} range={SHARE} />
              <Table caption={`Cache reads by ${by}, last ${range}`} rows={rows} rowKey={(r) => groupName(r.group)} columns={CACHE_COLUMNS} />
            </>
          ) : buckets && !buckets.ok ? (
            <Problem answer={buckets} what="usage over time" />
          ) : (
            <p className="loading">Loading…</p>
          )}
        </>
      )}
    </section>
  );
}
