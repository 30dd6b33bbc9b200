import { useCallback, useEffect, useState } from "react";
import { call, type Answer } from "../api.ts";
import { cost, num, when } from "../format.ts";
import { Empty, Problem, Table } from "../ui.tsx";
import type { KeyFields } from "./key-draft.ts";
import { KeyForm } from "./key-form.tsx";

/** A key as `GET /admin/v1/keys` lists it: env keys have only a name, scopes and where they are set. */
type Key = Partial<KeyFields> & Pick<KeyFields, "name" | "scopes"> & {
  id: string | null;
  source?: string;
  prefix?: string;
  revoked_at?: number | null;
  spend?: { unit: "usd" | "tokens"; used: number; reserved: number; limit: number } | null;
  last_used_at?: number | null;
  created_at?: number;
};

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
  /** Whether the API took it; if not, its message is shown. */
  const act = async (path: string, init: RequestInit, what: string) => {
    setError(undefined);
    const result = await call<Key & { key?: string }>(path, init);
    if (!result.ok) {
      setError(`${what}: ${result.message}`);
      return false;
    }
    if (result.data.key) setSecret({ name: result.data.name, secret: result.data.key });
    load();
    return true;
  };
  const save = async (fields: Partial<KeyFields>) => {
    const saved = Object.keys(fields).length === 0 || (await act(`/admin/v1/keys/${editing!.id}`, { method: "PATCH", body: JSON.stringify(fields) }, "Save"));
    if (saved) setEditing(undefined);
    return saved;
  };
  const refuse = (what: string) => (message: string) => setError(`${what}: ${message}`);
  const keys = answer.data.data.filter((k) => !k.revoked_at);
  return (
    <section>
      {secret && <Secret {...secret} onClose={() => setSecret(undefined)} />}
      {editing ? (
        <KeyForm key={editing.id} start={editing} creating={false} submit={save} refuse={refuse("Save")} cancel={() => {
          setEditing(undefined);
          setError(undefined);
        }} />
      ) : (
        <KeyForm start={{}} creating submit={(fields) => act("/admin/v1/keys", { method: "POST", body: JSON.stringify(fields) }, "Create")} refuse={refuse("Create")} />
      )}
      {error && <p className="error" role="alert">{error}</p>}
      {keys.length === 0 ? (
        <Empty><p>No keys yet. Create one above, or with <code>parley keys create NAME</code>.</p></Empty>
      ) : (
        <Table caption="Keys" rows={keys} rowKey={(k) => k.id ?? `env-${k.name}`} columns={[
          { label: "Name", value: (k) => <><strong>{k.name}</strong>{k.prefix && <><br /><small><code>{k.prefix}…</code></small></>}{status(k) && <><br /><small className="bad">{status(k)}</small></>}</> },
          { label: "May use", value: (k) => <Reach k={k} />, wrap: true },
          { label: "Budget", value: (k) => (k.budget ? `${k.budget.usd !== undefined ? cost(k.budget.usd) : `${num(k.budget.tokens)} tokens`} / ${k.budget.period}` : "–") },
          { label: "Spent", value: (k) => (k.spend ? (k.spend.unit === "usd" ? cost(k.spend.used) : `${num(k.spend.used)} tokens`) : "–"), numeric: true },
          { label: "Rate limit", value: (k) => <Rates k={k} />, numeric: true },
          { label: "Expires", value: (k) => (k.expires_at ? when(k.expires_at) : k.id ? "never" : "–") },
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

/** What stops a key that is not revoked: disabled, or past its expiry. */
function status(k: Key): string | undefined {
  if (k.disabled) return "disabled";
  if (k.expires_at && k.expires_at * 1000 <= Date.now()) return "expired";
}

/** Its scopes, and the models, routes and upstreams it is held to (none listed: all). */
function Reach({ k }: { k: Key }) {
  const held = (["models", "routes", "upstreams"] as const).filter((f) => k[f]?.length);
  return (
    <>
      {k.scopes.join(", ")}
      {held.map((f) => <small key={f}><br />{f}: {k[f]!.join(", ")}</small>)}
    </>
  );
}

/** Its own requests and tokens per minute, one a line. */
function Rates({ k }: { k: Key }) {
  const rates = [k.rpm && `${num(k.rpm)} rpm`, k.tpm && `${num(k.tpm)} tpm`].filter(Boolean);
  return rates.length ? rates.map((rate, i) => <span key={i}>{i > 0 && <br />}{rate}</span>) : "–";
}
