import type { Database } from "bun:sqlite";
import type { ActiveKey } from "./lookup.ts";
import { createKeyTables } from "./sqlite-schema.ts";

const WINDOW_MS = 60_000;

/**
 * A key's own requests per minute, in place of RATE_LIMIT_RPM (contract 19): one limiter per
 * distinct rpm, made by `makeLimiter` (the server's SQLite or Redis limiter, whose leases keep a
 * busy key at one statement per lease), counted under `key:<id>`. Undefined for a key without rpm.
 */
export function createKeyRpm<Decision>(makeLimiter: (rpm: number) => (bucket: string) => Decision) {
  const byRpm = new Map<number, (bucket: string) => Decision>();
  return function check(key: ActiveKey): Decision | undefined {
    if (key.rpm === null) return undefined;
    let limiter = byRpm.get(key.rpm);
    if (!limiter) byRpm.set(key.rpm, (limiter = makeLimiter(key.rpm)));
    return limiter(`key:${key.id}`);
  };
}

export interface TpmDecision {
  allowed: boolean;
  limit: number;
  used: number;
  /** Unix seconds when the minute's window ends. */
  reset: number;
}

/**
 * Tokens per minute per key, shared by every worker through SQLite: a request is let in while the
 * minute's tokens are under the key's tpm, and adds what it used when it ends. Tokens are known only
 * after the call, so the minute may end over the limit by what requests in flight use.
 */
export function createKeyTpm(database: () => Database) {
  let statements: ReturnType<typeof prepare> | undefined;
  let prunedBefore = 0;
  const s = () => (statements ??= prepare(database()));

  function prepare(db: Database) {
    createKeyTables(db);
    return {
      prune: db.query("DELETE FROM key_tokens WHERE window < $window"),
      read: db.query<{ count: number }, { key_id: string; window: number }>("SELECT count FROM key_tokens WHERE key_id = $key_id AND window = $window"),
      add: db.query(`INSERT INTO key_tokens (key_id, window, count) VALUES ($key_id, $window, $n)
        ON CONFLICT (key_id, window) DO UPDATE SET count = count + $n`),
    };
  }

  return {
    /** Undefined for a key without tpm. */
    check(key: ActiveKey, now = Date.now()): TpmDecision | undefined {
      if (key.tpm === null) return undefined;
      const window = Math.floor(now / WINDOW_MS);
      const used = s().read.get({ key_id: key.id, window })?.count ?? 0;
      return { allowed: used < key.tpm, limit: key.tpm, used, reset: ((window + 1) * WINDOW_MS) / 1000 };
    },
    /** Adds what a finished request used (every token it was billed). */
    add(key: ActiveKey, tokens: number, now = Date.now()): void {
      if (key.tpm === null || tokens <= 0) return;
      const window = Math.floor(now / WINDOW_MS);
      s().add.run({ key_id: key.id, window, n: tokens });
      // Once a minute, the windows before the last go.
      if (window > prunedBefore) {
        prunedBefore = window;
        s().prune.run({ window: window - 1 });
      }
    },
  };
}
