import { useEffect, useState } from "react";
import { call, type Answer } from "../api.ts";
import { Empty, Problem, Table } from "../ui.tsx";

/** A `[[routes]]` entry as GET /admin/v1/routes lists it. */
interface Route {
  name: string;
  match?: string;
  model?: string;
  to: { upstream: string; weight?: number; model?: string }[];
  weighted: boolean;
  when?: Record<string, unknown>;
}

export function Routes(_: { admin: boolean }) {
  const [answer, setAnswer] = useState<Answer<{ data: Route[]; file?: string }>>();
  const [model, setModel] = useState("");
  const [endpoint, setEndpoint] = useState("/v1/chat/completions");
  const [explained, setExplained] = useState<Answer<{ explanation: string }>>();
  useEffect(() => void call<{ data: Route[] }>("/admin/v1/routes").then(setAnswer), []);
  if (!answer) return <p className="loading">Loading…</p>;
  if (!answer.ok) return <Problem answer={answer} what="routes" />;
  const routes = answer.data.data;
  return (
    <section>
      {routes.length === 0 ? (
        <Empty><p>No <code>[[routes]]</code> yet: a model goes to the upstream that lists it. Add routes to <code>upstreams.toml</code> (docs/upstreams.md) to send requests by model, header or size.</p></Empty>
      ) : (
        <Table
          caption={`Routes, in order${answer.data.file ? `, from ${answer.data.file}` : ""}`}
          rows={routes}
          rowKey={(r) => r.name}
          columns={[
            { label: "#", value: (r) => routes.indexOf(r) + 1, numeric: true },
            { label: "Name", value: (r) => r.name },
            { label: "Model", value: (r) => <code>{r.match ?? "*"}</code> },
            { label: "When", value: (r) => (r.when ? <code>{JSON.stringify(r.when)}</code> : "always"), wrap: true },
            { label: "To", value: (r) => r.to.map((t) => `${t.upstream}${t.model ? ` (${t.model})` : r.model ? ` (${r.model})` : ""}${r.weighted ? ` ×${t.weight ?? 1}` : ""}`).join(r.weighted ? ", " : " → "), wrap: true },
          ]}
        />
      )}
      <h2>Explain</h2>
      <form
        className="toolbar"
        onSubmit={async (e) => {
          e.preventDefault();
          setExplained(await call("/admin/v1/routes/explain", { method: "POST", body: JSON.stringify({ model, endpoint }) }));
        }}
      >
        <label htmlFor="explain-model">Model</label>
        <input id="explain-model" value={model} onChange={(e) => setModel(e.target.value)} placeholder="claude-sonnet-4-5" required />
        <label htmlFor="explain-endpoint">Endpoint</label>
        <select id="explain-endpoint" value={endpoint} onChange={(e) => setEndpoint(e.target.value)}>
          {["/v1/chat/completions", "/v1/messages", "/v1/responses", "/v1/completions"].map((p) => <option key={p}>{p}</option>)}
        </select>
        <button type="submit">Explain</button>
      </form>
      {explained && (explained.ok ? <pre className="explain" aria-label="Explanation">{explained.data.explanation}</pre> : <p className="error" role="alert">{explained.message}</p>)}
    </section>
  );
}
