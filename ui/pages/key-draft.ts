/** A key as the form holds it (strings, as typed) and as the admin API takes it (contract 19). */

/** The scopes a key may have: src/config/keys.ts SCOPES (test/ui/key-draft.test.ts keeps them equal). */
export const SCOPES = ["chat", "models", "files:read", "files:write", "usage", "metrics", "admin"];

export type Budget = { usd?: number; tokens?: number; period: string };

/** The fields `POST /admin/v1/keys` and `PATCH /admin/v1/keys/{id}` take; `null` (`{}` for metadata, `false` for disabled) clears one. */
export interface KeyFields {
  name: string;
  scopes: string[];
  models: string[] | null;
  routes: string[] | null;
  upstreams: string[] | null;
  budget: Budget | null;
  rpm: number | null;
  tpm: number | null;
  expires_at: number | null;
  disabled: boolean;
  metadata: Record<string, string>;
}

export interface Draft {
  name: string;
  scopes: string[];
  models: string;
  routes: string;
  upstreams: string;
  amount: string;
  unit: "usd" | "tokens";
  period: string;
  rpm: string;
  tpm: string;
  /** A `datetime-local` value: the browser's zone, to the minute; empty: never. */
  expires: string;
  disabled: boolean;
  /** `key=value`, one a line. */
  metadata: string;
}

type Field = keyof KeyFields;
type Read = { ok: true; fields: Partial<KeyFields> } | { ok: false; message: string };

export function draftOf(key: Partial<KeyFields>): Draft {
  const budget = key.budget;
  return {
    name: key.name ?? "",
    scopes: key.scopes ?? ["chat", "models"],
    models: (key.models ?? []).join(", "),
    routes: (key.routes ?? []).join(", "),
    upstreams: (key.upstreams ?? []).join(", "),
    amount: budget ? String(budget.usd ?? budget.tokens) : "",
    unit: budget?.tokens !== undefined ? "tokens" : "usd",
    period: budget?.period ?? "day",
    rpm: key.rpm ? String(key.rpm) : "",
    tpm: key.tpm ? String(key.tpm) : "",
    expires: key.expires_at ? localTime(key.expires_at) : "",
    disabled: key.disabled ?? false,
    metadata: Object.entries(key.metadata ?? {}).map(([k, v]) => `${k}=${v}`).join("\n"),
  };
}

/** What each field is made of in the draft: a field whose parts are as they started is not sent. */
const PARTS: { [F in Field]: (d: Draft) => unknown } = {
  name: (d) => d.name.trim(),
  scopes: (d) => [...d.scopes].sort(),
  models: (d) => d.models, routes: (d) => d.routes, upstreams: (d) => d.upstreams,
  budget: (d) => (d.amount ? [d.amount, d.unit, d.period] : null),
  rpm: (d) => d.rpm, tpm: (d) => d.tpm, expires_at: (d) => d.expires, disabled: (d) => d.disabled, metadata: (d) => d.metadata,
};

/**
 * The API's fields from a draft: every one for a new key, only those changed since `start` for an
 * edit. Refused here only what the API's fields cannot say (a metadata line without `=`, a time
 * that is none) and, as `parley keys` does, an expiry in the past; the API checks the rest.
 */
export function readDraft(draft: Draft, start?: Draft, now = Date.now()): Read {
  const fields: Record<string, unknown> = {};
  for (const field of Object.keys(PARTS) as Field[]) {
    if (start && JSON.stringify(PARTS[field](start)) === JSON.stringify(PARTS[field](draft))) continue;
    const value = read(field, draft, now);
    if (value instanceof Refusal) return { ok: false, message: value.message };
    fields[field] = value;
  }
  return { ok: true, fields: fields as Partial<KeyFields> };
}

function read(field: Field, d: Draft, now: number): unknown {
  switch (field) {
    case "name": return d.name.trim();
    case "scopes": return d.scopes;
    case "models": case "routes": case "upstreams": return list(d[field]);
    case "budget": return d.amount ? { [d.unit]: Number(d.amount), period: d.period } : null;
    case "rpm": case "tpm": return d[field] ? Number(d[field]) : null;
    case "expires_at": return expiry(d.expires, now);
    case "disabled": return d.disabled;
    case "metadata": return metadata(d.metadata);
  }
}

class Refusal {
  constructor(readonly message: string) {}
}

function list(text: string): string[] | null {
  const names = text.split(",").map((s) => s.trim()).filter(Boolean);
  return names.length ? names : null;
}

function expiry(text: string, now: number): number | null | Refusal {
  if (!text) return null;
  const at = new Date(text).getTime();
  if (!Number.isFinite(at)) return new Refusal(`Expires: '${text}' is not a date and time.`);
  if (at <= now) return new Refusal("Expires: a time in the future (to stop a key now, disable or revoke it).");
  return Math.floor(at / 1000);
}

function metadata(text: string): Record<string, string> | Refusal {
  // A Map, so that a key such as __proto__ stays a key.
  const map = new Map<string, string>();
  for (const line of text.split("\n").map((l) => l.trim()).filter(Boolean)) {
    const at = line.indexOf("=");
    if (at < 0) return new Refusal(`Metadata: '${line.slice(0, 80)}' has no '=': write one key=value a line.`);
    map.set(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  return Object.fromEntries(map);
}

/** Unix seconds as a `datetime-local` value in the browser's zone, to the minute. */
export function localTime(unixS: number): string {
  const d = new Date(unixS * 1000);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}`;
}
