import type { SQL } from "bun";
import { migrateUsagePostgres } from "./postgres-store.ts";

/**
 * Shared counters in Postgres, as Redis keeps them (add with a lifetime, read): the rate limits'
 * and daily budgets' counts when DATABASE_URL is set and REDIS_URL is not (contract 21). Expired
 * counters are deleted now and then; their names carry their window or day, so one is never reused.
 */
export function createPostgresCounters(sql: SQL) {
  let prunedAt = 0;
  async function prune(now: number) {
    if (now - prunedAt < 60_000) return;
    prunedAt = now;
    await sql`DELETE FROM counters WHERE expires < ${now}`;
  }
  return {
    /** Adds `n` to a counter (made with a lifetime of `ttlS` seconds) and returns its new value. */
    async add(counter: string, n: number, ttlS: number): Promise<number> {
      await migrateUsagePostgres(sql);
      const now = Date.now();
      const [row] = await sql`INSERT INTO counters (counter, value, expires) VALUES (${counter}, ${n}, ${now + ttlS * 1000})
        ON CONFLICT (counter) DO UPDATE SET value = counters.value + excluded.value RETURNING value::float8 AS value`;
      void prune(now).catch(() => {});
      return row.value as number;
    },
    async read(counter: string): Promise<number> {
      await migrateUsagePostgres(sql);
      const [row] = await sql`SELECT value::float8 AS value FROM counters WHERE counter = ${counter}`;
      return (row?.value as number | undefined) ?? 0;
    },
  };
}

export type PostgresCounters = ReturnType<typeof createPostgresCounters>;
