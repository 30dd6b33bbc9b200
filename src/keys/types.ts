import { SCOPES, type Scope } from "../config.ts";

/** What a key may do: the scopes of API_KEYS, `admin` (the admin API, contract 19) among them. */
export type KeyScope = Scope;
export const KEY_SCOPES: readonly KeyScope[] = SCOPES;

export type Period = "day" | "week" | "month";
export const PERIODS: readonly Period[] = ["day", "week", "month"];

/** `{"usd": 5, "period": "day"}` or `{"tokens": 200000, "period": "week"}`: exactly one of usd and tokens. */
export type KeyBudget = ({ usd: number; tokens?: undefined } | { tokens: number; usd?: undefined }) & { period: Period };

/** What a key has used in its budget's current period (contract 19: `spend`, when read). */
export interface Spend {
  unit: "usd" | "tokens";
  period: Period;
  /** Settled: what finished requests cost. */
  used: number;
  /** Held by requests still in flight. */
  reserved: number;
  limit: number;
  /** Unix seconds when the period ends and the budget starts again. */
  resets_at: number;
}

/** A key as the admin API shows it: never the secret, never its hash. Times are Unix seconds. */
export interface KeyRecord {
  id: string;
  source: "runtime";
  name: string;
  /** The secret's first 10 characters (`pk-` and 7 more), to tell keys apart. */
  prefix: string;
  scopes: KeyScope[];
  /** Globs of the models it may call; null: all. */
  models: string[] | null;
  /** Names of the routes it may use; null: all. */
  routes: string[] | null;
  /** Names of the upstreams it may reach; null: all. */
  upstreams: string[] | null;
  budget: KeyBudget | null;
  rpm: number | null;
  tpm: number | null;
  expires_at: number | null;
  disabled: boolean;
  revoked_at: number | null;
  metadata: Record<string, string>;
  created_at: number;
  last_used_at: number | null;
  spend?: Spend;
}

/** The fields a key is created with, or changed by (`null` clears one). */
export interface KeyFields {
  name: string;
  scopes: KeyScope[];
  models: string[] | null;
  routes: string[] | null;
  upstreams: string[] | null;
  budget: KeyBudget | null;
  rpm: number | null;
  tpm: number | null;
  expires_at: number | null;
  disabled: boolean;
  metadata: Record<string, string>;
}

export type KeyChanges = Partial<KeyFields>;

/** A record with its secret: what creation and rotation answer, once. */
export type Issued = KeyRecord & { key: string };

/** One admin change (contract 19, `GET /admin/v1/audit`): never a secret. */
export interface AuditEntry {
  id: number;
  /** Unix milliseconds. */
  time: number;
  /** The label of the key that made the change. */
  actor: string;
  action: string;
  /** What was changed: a key's id, an upstream's name; null when nothing in particular. */
  target: string | null;
  detail: Record<string, unknown>;
}
