import { invalidRequest, validationError } from "../errors.ts";
import { isKeyId } from "./secret.ts";
import { KEY_SCOPES, PERIODS, type KeyBudget, type KeyChanges, type KeyFields, type KeyScope, type Period } from "./types.ts";

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const MAX_LIST = 100;
const MAX_METADATA = 50;

/** A key made without scopes can chat and list models: what a teammate, a CI job or an app needs. */
export const DEFAULT_SCOPES: readonly KeyScope[] = ["chat", "models"];

const DEFAULTS: Omit<KeyFields, "name"> = {
  scopes: [...DEFAULT_SCOPES], models: null, routes: null, upstreams: null, budget: null,
  rpm: null, tpm: null, expires_at: null, disabled: false, metadata: {},
};

const CHECKS: { [F in keyof KeyFields]: (value: unknown) => KeyFields[F] } = {
  name: (v) => (typeof v === "string" && NAME.test(v) && !isKeyId(v) ? v : fail("name", "1 to 64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit, not of a key id's form (key_ and 16 characters)")),
  scopes: (v) => (Array.isArray(v) && v.length > 0 && v.every((s) => KEY_SCOPES.includes(s)) ? [...new Set(v as KeyScope[])] : fail("scopes", `a non-empty list of ${KEY_SCOPES.join(", ")}`)),
  models: (v) => names(v, "models"),
  routes: (v) => names(v, "routes"),
  upstreams: (v) => names(v, "upstreams"),
  budget: (v) => (v === null ? null : budget(v)),
  rpm: (v) => count(v, "rpm"),
  tpm: (v) => count(v, "tpm"),
  expires_at: (v) => (v === null || (Number.isSafeInteger(v) && (v as number) > 0) ? (v as number | null) : fail("expires_at", "Unix seconds, or null for never")),
  disabled: (v) => (typeof v === "boolean" ? v : fail("disabled", "true or false")),
  metadata: (v) => metadata(v),
};

/** A creation request's body, checked field by field: every field but `name` may be left out. */
export function checkNewKey(body: unknown): KeyFields {
  const changes = checkChanges(body);
  if (changes.name === undefined) throw validationError("name", "required");
  return { ...DEFAULTS, ...changes } as KeyFields;
}

/** A change's body: only the fields it names; `null` clears an optional one. Unknown fields are refused. */
export function checkChanges(body: unknown): KeyChanges {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalidRequest("The body must be a JSON object.");
  const changes: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body)) {
    if (!Object.hasOwn(CHECKS, field)) throw validationError(field, `unknown field (known: ${Object.keys(CHECKS).join(", ")})`);
    changes[field] = CHECKS[field as keyof KeyFields](value);
  }
  return changes as KeyChanges;
}

function names(value: unknown, field: string): string[] | null {
  if (value === null) return null;
  const ok = Array.isArray(value) && value.length <= MAX_LIST && value.every((s) => typeof s === "string" && s.length > 0 && s.length <= 200);
  return ok ? [...new Set(value as string[])] : fail(field, `a list of up to ${MAX_LIST} names or globs (* matches anything), or null for all`);
}

function budget(value: unknown): KeyBudget {
  const rule = `{"usd": N, "period": "day"|"week"|"month"} or {"tokens": N, "period": …}, N > 0, tokens whole`;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return fail("budget", rule);
  const { usd, tokens, period, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || !PERIODS.includes(period as Period)) return fail("budget", rule);
  if (usd !== undefined && tokens === undefined && typeof usd === "number" && usd > 0 && Number.isFinite(usd)) return { usd, period: period as Period };
  if (tokens !== undefined && usd === undefined && Number.isSafeInteger(tokens) && (tokens as number) > 0) return { tokens: tokens as number, period: period as Period };
  return fail("budget", rule);
}

const count = (value: unknown, field: string): number | null =>
  value === null || (Number.isSafeInteger(value) && (value as number) > 0) ? (value as number | null) : fail(field, "a whole number above 0, or null for no limit of its own");

function metadata(value: unknown): Record<string, string> {
  const rule = `a flat map of up to ${MAX_METADATA} string values (keys up to 64 characters, values up to 512)`;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return fail("metadata", rule);
  const entries = Object.entries(value);
  const ok = entries.length <= MAX_METADATA && entries.every(([k, v]) => k.length > 0 && k.length <= 64 && typeof v === "string" && v.length <= 512);
  return ok ? Object.fromEntries(entries) : fail("metadata", rule);
}

function fail(field: string, rule: string): never {
  throw validationError(field, rule);
}
