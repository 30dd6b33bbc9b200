import { useEffect, useState } from "react";
import { call, type Answer } from "../api.ts";
import { Empty, Problem, Table } from "../ui.tsx";

interface Setting { key: string; value: string | null; source: string | null }

export function Settings(_: { admin: boolean }) {
  const [answer, setAnswer] = useState<Answer<{ data: Setting[] }>>();
  const [all, setAll] = useState(false);
  useEffect(() => void call<{ data: Setting[] }>("/admin/v1/config").then(setAnswer), []);
  if (!answer) return <p className="loading">Loading…</p>;
  if (!answer.ok) return <Problem answer={answer} what="the configuration" />;
  if (answer.data.data.length === 0) return <Empty><p>The gateway reported no settings. <code>parley config show</code> prints them from the command line.</p></Empty>;
  const rows = answer.data.data.filter((s) => all || s.value !== null);
  return (
    <section>
      <p className="hint">The settings in force, secrets masked. Change them in <code>parley.toml</code>, <code>.env</code> or the environment (docs/configuration.md).</p>
      <div className="toolbar">
        <label><input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} /> Show unset settings</label>
      </div>
      <Table caption="Effective settings" rows={rows} rowKey={(s) => s.key} columns={[
        { label: "Setting", value: (s) => <code>{s.key}</code> },
        { label: "Value", value: (s) => s.value ?? "–" },
        { label: "Source", value: (s) => s.source ?? "unset" },
      ]} />
    </section>
  );
}
