import { useCallback, useEffect, useState } from "react";
import { call, type Answer } from "../api.ts";
import { cost, num, when } from "../format.ts";
import { Empty, Problem, Table } from "../ui.tsx";
import { KeyForm } from "./key-form.tsx";

interface Key {
  id: string | null;
  name: string;
  source?: string;
  prefix?: string;
  scopes: string[];
  models?: string[] | null;
  rpm?: number | null;
  disabled?: boolean;
  revoked_at?: number | null;
  budget?: { usd?: number; tokens?: number; period: string } | null;
  spend?: { unit: "usd" | "tokens"; used: number; reserved: number; limit: number } | null;
  last_used_at?: number | null;
  created_at?: number;
}

function Secret({ name, secret, onClose }: { name: string; secret: string; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="secret" role="dialog" aria-label={`New secret for ${name}`}>
      <p><strong>The secret of {name}</strong>: shown this once. Copy it now.</p>
      <code className="secret-value" data-testid="secret">{secret}</code>
      <div className="toolbar">
        <button type="button" autoFocus onClick={() => navigator.clipboard?.writeText(secret).then(() => setCopied(true), () => setCopied(false))}>{copied ? "Copied" : "Copy"}</button>
        <button type="button" onClick={onClose}>Done</button>
      </div>
    </div>
  );
}

export function Keys({ admin }: { admin: boolean }) {
  const [answer, setAnswer] = useState<Answer<{ data: Key[] }>>();
  const [secret, setSecret] = useState<{ name: string; secret: string }>();
  const [editing, setEditing] = useState<Key>();
  const [error, setError] = useState<string>();
  const load = useCallback(() => void call<{ data: Key[] }>("/admin/v1/keys").then(setAnswer), []);
  useEffect(load, [load]);
  if (!admin) return <p className="note" role="status">Keys are for admin keys only; this key reads usage.</p>;
  if (!answer) return <p className="loading">Loading…</p>;
  if (!answer.ok) return <Problem answer={answer} what="keys" />;
  const act = async (path: string, init: RequestInit, what: string) => {
    setError(undefined);
    const result = await call<Key & { key?: string }>(path, init);
    if (!result.ok) return setError(`${what}: ${result.message}`);
    if (result.data.key) setSecret({ name: result.data.name, secret: result.data.key });
    load();
  };
  const keys = answer.data.data.filter((k) => !k.revoked_at);
  return (
    <section>
      {secret && <Secret {...secret} onClose={() => setSecret(undefined)} />}
      {editing ? (
        <KeyForm key={editing.id} start={editing} naming={false} cancel={() => setEditing(undefined)} submit={async (fields) => {
          await act(`/admin/v1/keys/${editing.id}`, { method: "PATCH", body: JSON.stringify(fields) }, "Save");
          setEditing(undefined);
        }} />
      ) : (
        <KeyForm start={{ scopes: ["chat", "models"] }} naming submit={(fields) => act("/admin/v1/keys", { method: "POST", body: JSON.stringify(fields) }, "Create")} />
      )}
      {error && <p className="error" role="alert">{error}</p>}
      {keys.length === 0 ? (
        <Empty><p>No keys yet. Create one above, or with <code>parley keys create NAME</code>.</p></Empty>
      ) : (
        <Table caption="Keys" rows={keys} rowKey={(k) => k.id ?? `env-${k.name}`} columns={[
          { label: "Name", value: (k) => <><strong>{k.name}</strong>{k.prefix && <><br /><small><code>{k.prefix}…</code></small></>}</> },
          { label: "Scopes", value: (k) => k.scopes.join(", ") },
          { label: "Budget", value: (k) => (k.budget ? `${k.budget.usd !== undefined ? cost(k.budget.usd) : `${num(k.budget.tokens)} tokens`} / ${k.budget.period}` : "–") },
          { label: "Spent", value: (k) => (k.spend ? (k.spend.unit === "usd" ? cost(k.spend.used) : `${num(k.spend.used)} tokens`) : "–"), numeric: true },
          { label: "Last used", value: (k) => when(k.last_used_at) },
          {
            label: "Actions",
            value: (k) => k.source === "env" || !k.id ? <small>set in the environment</small> : (
              <span className="actions">
                <button type="button" aria-label={`Edit ${k.name}`} onClick={() => setEditing(k)}>Edit</button>
                <button type="button" aria-label={`${k.disabled ? "Enable" : "Disable"} ${k.name}`} onClick={() => act(`/admin/v1/keys/${k.id}`, { method: "PATCH", body: JSON.stringify({ disabled: !k.disabled }) }, "Update")}>{k.disabled ? "Enable" : "Disable"}</button>
                <button type="button" aria-label={`Rotate ${k.name}`} onClick={() => act(`/admin/v1/keys/${k.id}/rotate`, { method: "POST", body: "{}" }, "Rotate")}>Rotate</button>
                <button type="button" className="danger" aria-label={`Revoke ${k.name}`} onClick={() => confirm(`Revoke ${k.name}? Its secret stops working at once.`) && act(`/admin/v1/keys/${k.id}`, { method: "DELETE" }, "Revoke")}>Revoke</button>
              </span>
            ),
          },
        ]} />
      )}
    </section>
  );
}
