import type { InputHTMLAttributes } from "react";
import { SCOPES, type Draft } from "./key-draft.ts";

/** The parts of the key form: each control with its label; `set` changes part of the draft. */
type Part = { id: string; draft: Draft; set: (change: Partial<Draft>) => void };
type TextName = "name" | "models" | "routes" | "upstreams" | "rpm" | "tpm";

export function TextInput({ id, draft, set, field, label, ...rest }: Part & { field: TextName; label: string } & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <span>
      <label htmlFor={`${id}-${field}`}>{label}</label>
      <input id={`${id}-${field}`} value={draft[field]} onChange={(e) => set({ [field]: e.target.value })} {...rest} />
    </span>
  );
}

/** A whole number above 0; empty: no limit of the key's own. */
export const Rate = (props: Part & { field: "rpm" | "tpm"; label: string }) => (
  <TextInput {...props} type="number" min="1" step="1" inputMode="numeric" placeholder="no limit" className="short n" />
);

export function Scopes({ draft, set }: Part) {
  const scopes = draft.scopes;
  return (
    <fieldset>
      <legend>Scopes</legend>
      {SCOPES.map((s) => (
        <label key={s}>
          <input type="checkbox" checked={scopes.includes(s)} onChange={(e) => set({ scopes: e.target.checked ? [...scopes, s] : scopes.filter((x) => x !== s) })} /> {s}
        </label>
      ))}
    </fieldset>
  );
}

export function BudgetInput({ id, draft, set }: Part) {
  return (
    <span>
      <label htmlFor={`${id}-budget`}>Budget</label>
      <input id={`${id}-budget`} type="number" min="0" step="any" inputMode="decimal" value={draft.amount} onChange={(e) => set({ amount: e.target.value })} placeholder="none" className="short n" />
      <select aria-label="Budget unit" value={draft.unit} onChange={(e) => set({ unit: e.target.value as Draft["unit"] })}>
        <option value="usd">USD</option>
        <option value="tokens">tokens</option>
      </select>
      <select aria-label="Budget period" value={draft.period} onChange={(e) => set({ period: e.target.value })}>
        {["day", "week", "month"].map((p) => <option key={p} value={p}>per {p}</option>)}
      </select>
    </span>
  );
}

/** When the key stops, in the browser's zone; Never clears it. */
export function Expiry({ id, draft, set }: Part) {
  return (
    <span>
      <label htmlFor={`${id}-expires`}>Expires</label>
      <input id={`${id}-expires`} type="datetime-local" value={draft.expires} onChange={(e) => set({ expires: e.target.value })} />
      <button type="button" aria-label="Expires never" disabled={!draft.expires} onClick={() => set({ expires: "" })}>Never</button>
      {!draft.expires && <small>never</small>}
    </span>
  );
}

export function Metadata({ id, draft, set }: Part) {
  return (
    <span className="metadata">
      <label htmlFor={`${id}-metadata`}>Metadata</label>
      <textarea id={`${id}-metadata`} aria-describedby={`${id}-metadata-hint`} rows={Math.min(8, Math.max(2, draft.metadata.split("\n").length))} value={draft.metadata} onChange={(e) => set({ metadata: e.target.value })} placeholder={"team=web\nowner=ana"} spellCheck={false} />
      <small id={`${id}-metadata-hint`}>key=value, one a line</small>
    </span>
  );
}

export function Disabled({ id, draft, set }: Part) {
  return (
    <span>
      <input id={`${id}-disabled`} type="checkbox" checked={draft.disabled} onChange={(e) => set({ disabled: e.target.checked })} />
      <label htmlFor={`${id}-disabled`}>Disabled</label>
    </span>
  );
}
