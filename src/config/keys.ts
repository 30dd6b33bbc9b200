/** API_KEYS: clients' keys beyond API_KEY, each limited to scopes and optionally to a daily budget. */

import { rule, splitList, type Check } from "./values.ts";

/** A client's key is long enough not to be guessed (contract 25): the examples use longer ones. */
export const MIN_KEY_LENGTH = 16;
const longEnough = (key: string) => key.length >= MIN_KEY_LENGTH && !/\s/.test(key);
export const clientKey = rule(`a key of at least ${MIN_KEY_LENGTH} characters without spaces (such as sk-parley- and 24 random letters)`, longEnough);

export type Scope = "chat" | "models" | "files:read" | "files:write" | "usage" | "metrics" | "admin";
export const SCOPES: readonly Scope[] = ["chat", "models", "files:read", "files:write", "usage", "metrics", "admin"];

/** A daily allowance, in tokens or US dollars, counted per UTC day. */
export interface Budget {
  amount: number;
  unit: "tokens" | "usd";
}

/** One `API_KEYS` entry: `[name=]key:scope+scope[@<N>tokens/day|@<N>usd/day]`. */
export interface KeyEntry {
  key: string;
  scopes: Scope[];
  name?: string;
  budget?: Budget;
}

const KEY_SHAPE = `[name=]key:scope+scope[@<N>tokens/day|@<N>usd/day],… with scopes from ${SCOPES.join(", ")}`;
const KEY_ENTRY = /^(?:([A-Za-z0-9_.-]{1,64})=)?([^:\s]+):([^@\s]+?)(?:@(\d+(?:\.\d+)?)(tokens|usd)\/day)?$/;

/** One `API_KEYS` entry, or undefined when it does not fit the grammar. */
export function parseKeyEntry(item: string): KeyEntry | undefined {
  const match = KEY_ENTRY.exec(item);
  if (!match) return undefined;
  const [, name, key, scopeList, amount, unit] = match;
  const scopes = scopeList!.split("+");
  if (!scopes.every((s) => SCOPES.includes(s as Scope))) return undefined;
  return {
    key: key!,
    scopes: scopes as Scope[],
    ...(name ? { name } : {}),
    ...(amount ? { budget: { amount: Number(amount), unit: unit as Budget["unit"] } } : {}),
  };
}

/** Every entry fits the grammar, and names are unique and not `main` (API_KEY's label). */
function checkKeyEntries(value: string): string | undefined {
  const entries = splitList(value).map(parseKeyEntry);
  if (entries.some((e) => !e || (e.budget && !(e.budget.amount > 0)))) return KEY_SHAPE;
  if (entries.some((e) => !longEnough(e!.key))) return `${KEY_SHAPE}; each key at least ${MIN_KEY_LENGTH} characters`;
  const names = entries.map((e) => e!.name).filter((n): n is string => n !== undefined);
  if (names.includes("main") || names.some((n) => n.startsWith("key-"))) return `${KEY_SHAPE}; the names "main" and "key-…" are parley's own labels`;
  if (new Set(names).size < names.length) return `${KEY_SHAPE}, each name used once`;
}

/** API_KEYS' rule. */
export const keyEntries: Check = Object.assign((v: string) => checkKeyEntries(v), { allowed: `${KEY_SHAPE}; each name used once, not "main" or "key-…"` });
