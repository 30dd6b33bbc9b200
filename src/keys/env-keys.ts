import type { Budget } from "../config.ts";
import type { ActiveKey } from "./lookup.ts";
import { hashSecret } from "./secret.ts";
import type { KeyScope } from "./types.ts";

export interface EnvKey {
  /** The secret as API_KEY or API_KEYS gives it (16 characters or more: contract 25). */
  key: string;
  /** Its label (contract 12): `main`, the entry's name, else `key-` and 8 hex digits of its SHA-256. */
  label: string;
  scopes: readonly KeyScope[];
  budget?: Budget;
}

/**
 * Env keys as the lookup serves them, beside the runtime keys in the same map: every restriction
 * open, and an API_KEYS daily budget as a budget of the ledger, counted under `env:<label>`.
 */
export function envKeys(entries: readonly EnvKey[]): [string, ActiveKey][] {
  return entries.map((entry) => [hashSecret(entry.key), {
    id: `env:${entry.label}`,
    label: entry.label,
    source: "env",
    scopes: new Set(entry.scopes),
    allowsModel: null,
    routes: null,
    upstreams: null,
    budget: entry.budget ? { ...(entry.budget.unit === "usd" ? { usd: entry.budget.amount } : { tokens: entry.budget.amount }), period: "day" } as ActiveKey["budget"] : null,
    rpm: null,
    tpm: null,
  }]);
}
