import { useEffect, useState } from "react";
import { call, type Answer } from "../api.ts";
import { ms, pct, when } from "../format.ts";
import { Empty, Problem, Table } from "../ui.tsx";

interface Upstream {
  name: string;
  kind: string;
  where?: string;
  status: string;
  cooldown_until: number | null;
  models: string[];
  last_5m: { requests: number; p50_ms: number | null; p95_ms: number | null; error_rate: number | null };
}
interface Tested { ok: boolean; latency_ms: number; text?: string; error?: string; model?: string }

export function Upstreams({ admin }: { admin: boolean }) {
  const [answer, setAnswer] = useState<Answer<{ data: Upstream[] }>>();
  const [tests, setTests] = useState<Record<string, Tested | "running">>({});
  useEffect(() => void call<{ data: Upstream[] }>("/admin/v1/upstreams").then(setAnswer), []);
  if (!answer) return <p className="loading">Loading…</p>;
  if (!answer.ok) return <Problem answer={answer} what="upstreams" />;
  if (answer.data.data.length === 0) return <Empty><p>No upstream is configured. Set <code>ALPHA_BASE_URL</code> or add one to <code>upstreams.toml</code> (docs/upstreams.md).</p></Empty>;
  const test = async (name: string) => {
    setTests((t) => ({ ...t, [name]: "running" }));
    const result = await call<Tested>(`/admin/v1/upstreams/${encodeURIComponent(name)}/test`, { method: "POST" });
    setTests((t) => ({ ...t, [name]: result.ok ? result.data : { ok: false, latency_ms: 0, error: result.message } }));
  };
  return (
    <Table
      caption="Upstreams, with the last 5 minutes"
      rows={answer.data.data}
      rowKey={(u) => u.name}
      columns={[
        { label: "Name", value: (u) => <><strong>{u.name}</strong><br /><small>{u.kind}{u.where ? ` · ${u.where}` : ""}</small></> },
        { label: "Status", value: (u) => <span className={u.status === "available" ? "good" : "bad"}>{u.status}</span> },
        { label: "Cooling until", value: (u) => (u.cooldown_until ? when(u.cooldown_until) : "–") },
        { label: "p50", value: (u) => ms(u.last_5m?.p50_ms), numeric: true },
        { label: "p95", value: (u) => ms(u.last_5m?.p95_ms), numeric: true },
        { label: "Errors", value: (u) => pct(u.last_5m?.error_rate), numeric: true },
        { label: "Models", value: (u) => (u.models.length ? u.models.slice(0, 8).join(", ") + (u.models.length > 8 ? ` and ${u.models.length - 8} more` : "") : "–"), wrap: true },
        {
          label: "Test",
          value: (u) => {
            const t = tests[u.name];
            return (
              <>
                {admin && <button type="button" onClick={() => test(u.name)} disabled={t === "running"} aria-label={`Test ${u.name}`}>Test</button>}
                {t && t !== "running" && <div role="status" className={t.ok ? "good" : "bad"}>{t.ok ? `ok in ${ms(t.latency_ms)}` : t.error}</div>}
              </>
            );
          },
        },
      ]}
    />
  );
}
