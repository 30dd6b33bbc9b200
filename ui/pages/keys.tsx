import { useCallback, useEffect, useState } from "react";
import { call, type Answer } from "../api.ts";
import { cost, num, when } from "../format.ts";
import { Empty, Problem, Table } from "../ui.tsx";

interface Key {
  id: string | null;
  name: string;
  source?: string;
  prefix?: string;
  scopes: string[];
  disabled?: boolean;
  revoked_at?: number | null;
  budget?: { usd?: number; tokens?: number; period: string } | null;
  spend?: { usd?: number; tokens?: number } | null;
  last_used_at?: number | null;
  created_at?: number;
}

const SCOPES = ["chat", "models", "files:read", "files:write", "usage", "admin"];

function Secret({ name, secret, onClose }: { name: string; secret: string; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="secret" role="dialog" aria-label={`New secret for ${name}`}>
      <p><strong>The secret of {name}</strong>: shown this once. Copy it now.</p>
      <code className="secret-value" data-testid="secret">{secret}</code>
      <div className="toolbar">
        <button type="button" onClick={() => navigator.clipboard?.writeText(secret).then(() => setCopied(true), () => setCopied(false))}>{copied ? "Copied" : "Copy"}</button>
        <button type="button" onClick={onClose}>Done</button>
      </div>
    </div>
  );
}

export function Keys({ admin }: { admin: boolean }) {
  const [answer, setAnswer] = useState<Answer<{ data: Key[] }>>();
  const [secret, setSecret] = useState<{ name: string; secret: string }>();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState(["chat", "models"]);
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
      <form
        className="toolbar"
        onSubmit={async (e) => {
          e.preventDefault();
          await act("/admin/v1/keys", { method: "POST", body: JSON.stringify({ name: name.trim(), scopes }) }, "Create");
          setName("");
        }}
      >
        <label htmlFor="key-name">New key's name</label>
        <input id="key-name" value={name} onChange={(e) => setName(e.target.value)} pattern="[A-Za-z0-9._\-]{1,64}" required />
        <fieldset>
          <legend>Scopes</legend>
          {SCOPES.map((s) => (
            <label key={s}>
              <input type="checkbox" checked={scopes.includes(s)} onChange={(e) => setScopes(e.target.checked ? [...scopes, s] : scopes.filter((x) => x !== s))} /> {s}
            </label>
          ))}
        </fieldset>
        <button type="submit">Create key</button>
      </form>
      {error && <p className="error" role="alert">{error}</p>}
      {keys.length === 0 ? (
        <Empty><p>No keys yet. Create one above, or with <code>parley keys create NAME</code>.</p></Empty>
      ) : (
        <Table caption="Keys" rows={keys} rowKey={(k) => k.id ?? `env-${k.name}`} columns={[
          { label: "Name", value: (k) => <><strong>{k.name}</strong>{k.prefix && <><br /><small><code>{k.prefix}…</code></small></>}</> },
          { label: "Scopes", value: (k) => k.scopes.join(", ") },
          { label: "Budget", value: (k) => (k.budget ? `${k.budget.usd !== undefined ? cost(k.budget.usd) : `${num(k.budget.tokens)} tokens`} / ${k.budget.period}` : "–") },
          { label: "Spent", value: (k) => (k.spend ? (k.spend.usd !== undefined ? cost(k.spend.usd) : `${num(k.spend.tokens)} tokens`) : "–"), numeric: true },
          { label: "Last used", value: (k) => when(k.last_used_at) },
          {
            label: "Actions",
            value: (k) => k.source === "env" || !k.id ? <small>set in the environment</small> : (
              <span className="actions">
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
