import type { KeyBudget, Period, Spend } from "./types.ts";

type MaybePromise<T> = T | Promise<T>;

/** What a request holds of its key's budget until it settles. Amounts are in the ledger's integer unit. */
export interface Reservation {
  id: number;
  keyId: string;
  /** The period it was reserved in: it settles there, even when the request ends after midnight. */
  period: string;
  unit: "usd" | "tokens";
  amount: number;
}

export type Reserved =
  | { ok: true; reservation: Reservation }
  | { ok: false; unit: "usd" | "tokens"; period: Period; limit: number; used: number; reserved: number; needed: number; resets_at: number };

/**
 * Budgets that cannot be outrun: a request reserves what it may cost before the call, atomically
 * with the check against what is spent and held by every process (or gateway) sharing the ledger,
 * and settles with what it did cost. Amounts are in the budget's unit (US dollars or tokens).
 * SQLite today (sqlite-ledger.ts); Postgres or Redis may follow behind the same shape.
 */
export interface BudgetLedger {
  reserve(keyId: string, budget: KeyBudget, amount: number, now?: number): MaybePromise<Reserved>;
  /** Replaces the reservation by the real cost (0 when the call cost nothing); settling twice counts once. */
  settle(reservation: Reservation, actual: number): MaybePromise<void>;
  /** What the key has spent and holds in its budget's current period. */
  spend(keyId: string, budget: KeyBudget, now?: number): MaybePromise<Spend>;
}

/** Dollars are counted in micro-dollars, so every total is an exact integer. */
export const unitOf = (budget: KeyBudget) => (budget.usd !== undefined ? "usd" : "tokens") as "usd" | "tokens";
export const limitOf = (budget: KeyBudget): number => budget.usd ?? budget.tokens!;
export const toLedger = (unit: "usd" | "tokens", amount: number, round: (n: number) => number = Math.ceil) =>
  unit === "usd" ? round(amount * 1e6) : round(amount);
export const fromLedger = (unit: "usd" | "tokens", amount: number) => (unit === "usd" ? amount / 1e6 : amount);

/** A record as read (contract 19): with its budget's spend for the current period. */
export async function withSpend<R extends { id: string; budget: KeyBudget | null }>(record: R, ledger: BudgetLedger): Promise<R & { spend?: Spend }> {
  return record.budget ? { ...record, spend: await ledger.spend(record.id, record.budget) } : record;
}
