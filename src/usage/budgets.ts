import type { Database } from "bun:sqlite";
import type { PostgresCounters } from "./postgres-counters.ts";
import type { Budget } from "../config.ts";
import { unavailable } from "../errors.ts";
import { ADD_WITH_EXPIRY, RedisUnreachable, type OnRedisError, type Redis } from "../lib/redis.ts";

/** Where the day's shared counts live: SQLite (the workers of one machine) or Redis (every gateway). */
export interface BudgetStore {
  /** Adds to a counter and returns its new total. */
  add(counter: string, amount: number): number | Promise<number>;
  read(counter: string): number | Promise<number>;
}

export interface BudgetState {
  /** Unix seconds of the next 00:00 UTC, when the budget starts again. */
  reset: number;
  used: number;
  /** In the budget's unit: tokens, or US dollars. */
  limit: number;
}

/** How often a process asks the store what the other processes have spent. */
const REFRESH_MS = 1000;
const FLUSH_MS = 1000;
const DAY_S = 86_400;

/**
 * Daily budgets per key label, checked per request from memory: this process's own spending is
 * added at once, and the shared count (every worker, or every gateway on Redis) is fetched at most
 * once a second per key and written once a second. Dollars are counted in micro-dollars, so the
 * counters are integers on both stores. A request is let in while the day's spending is under the
 * budget; the one that crosses it finishes, the next ones are refused.
 */
export function createBudgets(store: BudgetStore, onError: OnRedisError = "open") {
  const known = new Map<string, { shared: number; at: number; failed: boolean; asking?: Promise<void> }>();
  const pending = new Map<string, number>();
  let timer: Timer | undefined;

  const counterOf = (label: string, budget: Budget, day = utcDay()) => `${label}:${day}:${budget.unit}`;
  const scaled = (budget: Budget) => (budget.unit === "usd" ? budget.amount * 1e6 : budget.amount);

  async function refresh(counter: string): Promise<void> {
    let entry = known.get(counter);
    if (!entry) {
      if (known.size >= 1024) forgetOtherDays();
      known.set(counter, (entry = { shared: 0, at: 0, failed: false }));
    }
    entry.at = Date.now();
    try {
      entry.shared = await store.read(counter);
      entry.failed = false;
    } catch (error) {
      if (!(error instanceof RedisUnreachable)) throw error;
      entry.failed = true;
    }
  }

  async function flush(): Promise<void> {
    timer = undefined;
    // A snapshot: a failed add puts its amount back, which must wait for the next flush.
    const due = [...pending];
    pending.clear();
    for (const [counter, amount] of due) {
      try {
        const total = await store.add(counter, amount);
        const entry = known.get(counter);
        if (entry) entry.shared = total;
      } catch (error) {
        // Not written: counted again with the next flush.
        pending.set(counter, (pending.get(counter) ?? 0) + amount);
        if (!(error instanceof RedisUnreachable)) throw error;
      }
    }
    if (pending.size > 0) schedule();
  }

  function schedule() {
    if (timer) return;
    timer = setTimeout(() => void flush().catch(() => {}), FLUSH_MS);
    timer.unref();
  }

  return {
    /** What a completion cost the key: tokens, and US dollars when its model has a price. */
    spend(label: string, budget: Budget, tokens: number, usd: number | null): void {
      const amount = budget.unit === "tokens" ? tokens : Math.round((usd ?? 0) * 1e6);
      if (amount <= 0) return;
      const counter = counterOf(label, budget);
      pending.set(counter, (pending.get(counter) ?? 0) + amount);
      schedule();
    },

    /** Undefined while the key is within its budget, else how far over it is and when it resets. */
    async check(label: string, budget: Budget): Promise<BudgetState | undefined> {
      const counter = counterOf(label, budget);
      let entry = known.get(counter);
      if (!entry) {
        // The first request of the day waits for the shared count; later ones never do.
        await refresh(counter);
        entry = known.get(counter)!;
      } else if (Date.now() - entry.at >= REFRESH_MS && !entry.asking) {
        const asked = refresh(counter);
        entry.asking = asked.finally(() => (entry!.asking = undefined));
        // SQLite answers at once; Redis in the background while this request goes on.
        if (!(store instanceof RedisBudgetStore || store instanceof PostgresBudgetStore)) await asked;
      }
      if (entry.failed && onError === "closed") {
        throw unavailable("Budgets cannot be checked right now; try again shortly.", {
          details: "the budget store (Redis) is unreachable",
          headers: { "retry-after": "1" },
        });
      }
      const used = entry.shared + (pending.get(counter) ?? 0);
      if (used < scaled(budget)) return undefined;
      return { reset: nextUtcMidnight(), used: budget.unit === "usd" ? used / 1e6 : used, limit: budget.amount };
    },

    /** Writes what is pending now (when the app stops). */
    flush: () => flush(),
  };

  function forgetOtherDays(): void {
    const today = `:${utcDay()}:`;
    for (const counter of known.keys()) if (!counter.includes(today)) known.delete(counter);
  }
}

export type Budgets = ReturnType<typeof createBudgets>;

/** Budget counters in SQLite, one row per key label, day and unit; rows older than yesterday go. */
export function sqliteBudgetStore(database: () => Database): BudgetStore {
  let statements: ReturnType<typeof prepare> | undefined;
  const prepare = (db: Database) => {
    db.run(`CREATE TABLE IF NOT EXISTS budgets (counter TEXT PRIMARY KEY, day TEXT NOT NULL, used INTEGER NOT NULL) WITHOUT ROWID`);
    db.query("DELETE FROM budgets WHERE day < $day").run({ day: utcDay(Date.now() - DAY_S * 1000) });
    return {
      add: db.query<{ used: number }, { counter: string; day: string; n: number }>(
        `INSERT INTO budgets (counter, day, used) VALUES ($counter, $day, $n)
         ON CONFLICT (counter) DO UPDATE SET used = used + $n RETURNING used`,
      ),
      read: db.query<{ used: number }, { counter: string }>("SELECT used FROM budgets WHERE counter = $counter"),
    };
  };
  return {
    add: (counter, n) => (statements ??= prepare(database())).add.get({ counter, day: dayOf(counter), n })!.used,
    read: (counter) => (statements ??= prepare(database())).read.get({ counter })?.used ?? 0,
  };
}

/**
 * Budget counters in Redis, `parley:budget:<label>:<day>:<unit>`, added with the rate limiter's
 * atomic script and kept two days, so every gateway sharing the Redis counts one budget.
 */
export class RedisBudgetStore implements BudgetStore {
  constructor(private readonly redis: Redis) {}

  async add(counter: string, amount: number): Promise<number> {
    return Number(await this.redis.run(ADD_WITH_EXPIRY, [`parley:budget:${counter}`], [String(amount), String(2 * DAY_S)]));
  }

  async read(counter: string): Promise<number> {
    return Number((await this.redis.send("GET", [`parley:budget:${counter}`])) ?? 0);
  }
}

/** Budget counters in Postgres (DATABASE_URL without REDIS_URL): the same counters, shared by every gateway on the database. */
export class PostgresBudgetStore implements BudgetStore {
  constructor(private readonly counters: PostgresCounters) {}

  add(counter: string, amount: number): Promise<number> {
    return this.counters.add(`budget:${counter}`, amount, 2 * DAY_S);
  }

  read(counter: string): Promise<number> {
    return this.counters.read(`budget:${counter}`);
  }
}

export const utcDay = (now = Date.now()) => new Date(now).toISOString().slice(0, 10);

export const nextUtcMidnight = (now = Date.now()) => (Math.floor(now / 1000 / DAY_S) + 1) * DAY_S;

const dayOf = (counter: string) => /:(\d{4}-\d{2}-\d{2}):/.exec(counter)?.[1] ?? utcDay();
