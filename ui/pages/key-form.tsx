import { useState } from "react";

export const SCOPES = ["chat", "models", "files:read", "files:write", "usage", "admin"];

/** The fields of a key this form edits, as the admin API takes them. */
export interface KeyFields {
  name?: string;
  scopes: string[];
  models?: string[] | null;
  budget?: { usd?: number; tokens?: number; period: string } | null;
  rpm?: number | null;
}

/** Creates a key (with a name) or edits one: scopes, models, budget and requests per minute; empty means no limit. */
export function KeyForm({ start, naming, submit, cancel }: { start: KeyFields; naming: boolean; submit: (fields: KeyFields) => Promise<void>; cancel?: () => void }) {
  const id = naming ? "new" : "edit";
  const [name, setName] = useState(start.name ?? "");
  const [scopes, setScopes] = useState(start.scopes);
  const [models, setModels] = useState((start.models ?? []).join(", "));
  const [amount, setAmount] = useState(start.budget ? String(start.budget.usd ?? start.budget.tokens) : "");
  const [unit, setUnit] = useState(start.budget?.tokens !== undefined ? "tokens" : "usd");
  const [period, setPeriod] = useState(start.budget?.period ?? "day");
  const [rpm, setRpm] = useState(start.rpm ? String(start.rpm) : "");
  return (
    <form
      className="key-form"
      aria-label={naming ? "New key" : `Edit ${start.name}`}
      onSubmit={async (e) => {
        e.preventDefault();
        const globs = models.split(",").map((m) => m.trim()).filter(Boolean);
        await submit({
          ...(naming ? { name: name.trim() } : {}),
          scopes,
          models: globs.length ? globs : null,
          budget: amount ? { [unit]: Number(amount), period } : null,
          rpm: rpm ? Number(rpm) : null,
        });
        if (naming) setName("");
      }}
    >
      {naming && (
        <span>
          <label htmlFor={`${id}-name`}>New key's name</label>
          <input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} pattern="[A-Za-z0-9._\-]{1,64}" required />
        </span>
      )}
      <fieldset>
        <legend>Scopes</legend>
        {SCOPES.map((s) => (
          <label key={s}>
            <input type="checkbox" checked={scopes.includes(s)} onChange={(e) => setScopes(e.target.checked ? [...scopes, s] : scopes.filter((x) => x !== s))} /> {s}
          </label>
        ))}
      </fieldset>
      <span>
        <label htmlFor={`${id}-models`}>Models (globs; empty: all)</label>
        <input id={`${id}-models`} value={models} onChange={(e) => setModels(e.target.value)} placeholder="claude-*, gpt-4o" />
      </span>
      <span>
        <label htmlFor={`${id}-budget`}>Budget</label>
        <input id={`${id}-budget`} type="number" min="0" step="any" inputMode="decimal" value={amount} onChange={(e) => setAmount(e.target.value)} placeholder="none" className="short" />
        <select aria-label="Budget unit" value={unit} onChange={(e) => setUnit(e.target.value)}>
          <option value="usd">USD</option>
          <option value="tokens">tokens</option>
        </select>
        <select aria-label="Budget period" value={period} onChange={(e) => setPeriod(e.target.value)}>
          {["day", "week", "month"].map((p) => <option key={p} value={p}>per {p}</option>)}
        </select>
      </span>
      <span>
        <label htmlFor={`${id}-rpm`}>Requests per minute</label>
        <input id={`${id}-rpm`} type="number" min="1" step="1" value={rpm} onChange={(e) => setRpm(e.target.value)} placeholder="no limit" className="short" />
      </span>
      <span className="actions">
        <button type="submit">{naming ? "Create key" : "Save"}</button>
        {cancel && <button type="button" onClick={cancel}>Cancel</button>}
      </span>
    </form>
  );
}
