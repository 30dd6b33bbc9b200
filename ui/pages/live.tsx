import { useEffect, useMemo, useState } from "react";
import { events, type Answer } from "../api.ts";
import { clock, cost, ms, num } from "../format.ts";
import { Empty, Problem, Table, type Column } from "../ui.tsx";

/** A `request` event of /admin/v1/events: a usage record's fields with status, latency and the session. */
interface Row {
  time: number;
  endpoint: string;
  key_label: string;
  model: string | null;
  provider: string | null;
  route: string | null;
  status: number;
  latency_ms: number;
  ttft_ms: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cost_usd: number | null;
}

const KEEP = 500;
const COLUMNS: Column<Row>[] = [
  { label: "Time", value: (r) => clock(r.time) },
  { label: "Key", value: (r) => r.key_label },
  { label: "Endpoint", value: (r) => r.endpoint },
  { label: "Model", value: (r) => r.model ?? "–" },
  { label: "Upstream", value: (r) => r.provider ?? "–" },
  { label: "Route", value: (r) => r.route ?? "–" },
  { label: "Status", value: (r) => <span className={r.status >= 400 ? "bad" : "good"}>{r.status}</span>, numeric: true },
  { label: "Latency", value: (r) => ms(r.latency_ms), numeric: true },
  { label: "TTFT", value: (r) => ms(r.ttft_ms), numeric: true },
  { label: "In", value: (r) => num(r.input_tokens), numeric: true },
  { label: "Out", value: (r) => num(r.output_tokens), numeric: true },
  { label: "Cache read", value: (r) => num(r.cache_read_tokens), numeric: true },
  { label: "Cost", value: (r) => cost(r.cost_usd), numeric: true },
];
const text = (r: Row) => [r.key_label, r.endpoint, r.model, r.provider, r.route, r.status].join(" ").toLowerCase();

export function Live(_: { admin: boolean }) {
  const [rows, setRows] = useState<Row[]>([]);
  const [paused, setPaused] = useState(false);
  const [held, setHeld] = useState<Row[]>([]);
  const [filter, setFilter] = useState("");
  const [skipped, setSkipped] = useState(0);
  const [problem, setProblem] = useState<Extract<Answer<unknown>, { ok: false }>>();
  useEffect(() => {
    const stop = new AbortController();
    // The newest KEEP each half second: more than that could not be shown, and would cost the gateway.
    void events(`/admin/v1/events?last=${KEEP}`, (name, data) => {
      try {
        if (name === "skipped") return setSkipped((n) => n + (JSON.parse(data) as { count: number }).count);
        if (name !== "request") return;
        const row = JSON.parse(data) as Row;
        setHeld((h) => [row, ...h].slice(0, KEEP));
      } catch {
        // Not JSON: not an event this page knows.
      }
    }, stop.signal).then((answer) => !answer.ok && !stop.signal.aborted && setProblem(answer));
    return () => stop.abort();
  }, []);
  useEffect(() => {
    if (!paused && held.length) {
      setRows((r) => [...held, ...r].slice(0, KEEP));
      setHeld([]);
    }
  }, [held, paused]);
  const shown = useMemo(() => {
    const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
    return words.length ? rows.filter((r) => words.every((w) => text(r).includes(w))) : rows;
  }, [rows, filter]);
  if (problem) return <Problem answer={problem} what="live events" />;
  return (
    <section>
      <div className="toolbar">
        <label htmlFor="live-filter">Filter</label>
        <input id="live-filter" type="search" placeholder="model, key, upstream, status…" value={filter} onChange={(e) => setFilter(e.target.value)} />
        <button type="button" aria-pressed={paused} onClick={() => setPaused(!paused)}>{paused ? `Resume (${held.length} waiting)` : "Pause"}</button>
      </div>
      {skipped > 0 && <p className="note">{num(skipped)} more requests finished than this page lists: it shows the newest {KEEP} each half second.</p>}
      {rows.length === 0 ? (
        <Empty>
          <p><strong>Waiting for requests.</strong> Each request appears here as it finishes.</p>
          <p>Send one: <code>curl {location.origin}/v1/chat/completions -H "Authorization: Bearer $API_KEY" -d '{`{"model":"mock","messages":[{"role":"user","content":"hi"}]}`}'</code></p>
        </Empty>
      ) : (
        <Table rows={shown} columns={COLUMNS} caption="Requests as they finish, newest first" rowKey={(r, i) => `${r.time}-${i}`} />
      )}
    </section>
  );
}
