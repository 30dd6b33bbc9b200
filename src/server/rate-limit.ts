import type { Database } from "bun:sqlite";

const WINDOW_SECONDS = 60;
/** A key asking again within this long after its last claim is busy: its next claim is bigger. */
const BUSY_MS = 1000;
const MAX_LEASE = 256;

export interface RateDecision {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  reset: number;
  allowed: boolean;
}

interface Lease {
  window: number;
  /** Requests claimed from the shared count and not used yet. */
  left: number;
  /** The shared count after this process's last claim. */
  counted: number;
  size: number;
  claimedAt: number;
}

/**
 * Requests per minute per key, counted in SQLite so every worker process of one server shares one
 * limit. A process claims requests from the shared count in leases: one at a time for a key used
 * now and then, more (up to 256) for a busy key, never more than a sixteenth of what is left, so
 * the limit is never exceeded and a busy key costs one statement per lease instead of per request.
 */
export function createRateLimiter(database: () => Database, rpm: number) {
  // The database is opened on the first request, so an idle server holds no SQLite memory.
  let statements: ReturnType<typeof prepare> | undefined;
  const leases = new Map<string, Lease>();
  const janitor = setInterval(() => {
    const window = currentWindow();
    try {
      statements?.prune.run({ window: window - 1 });
    } catch {
      // The server has stopped and closed its database (or it is busy): a timer must not throw; the next run prunes.
    }
    for (const [key, lease] of leases) if (lease.window < window) leases.delete(key);
  }, WINDOW_SECONDS * 1000);
  janitor.unref();

  return function check(key: string): RateDecision {
    const now = Date.now();
    const window = currentWindow(now);
    const reset = (window + 1) * WINDOW_SECONDS;
    let lease = leases.get(key);
    if (!lease || lease.window !== window) {
      lease = { window, left: 0, counted: 0, size: 1, claimedAt: 0 };
      leases.set(key, lease);
    }
    if (lease.left === 0) {
      const busy = now - lease.claimedAt < BUSY_MS;
      lease.size = Math.max(1, Math.min(busy ? lease.size * 2 : 1, MAX_LEASE, Math.floor((rpm - lease.counted) / 16)));
      const { count } = (statements ??= prepare(database())).add.get({ key, window, n: lease.size })!;
      lease.counted = count;
      lease.claimedAt = now;
      // The claim's requests are the positions count-size+1 .. count; only those within the limit count.
      lease.left = Math.max(0, Math.min(lease.size, rpm - (count - lease.size)));
      if (lease.left === 0) return { limit: rpm, remaining: 0, reset, allowed: false };
    }
    lease.left--;
    return { limit: rpm, remaining: Math.max(0, rpm - lease.counted + lease.left), reset, allowed: true };
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

function prepare(db: Database) {
  db.run(`CREATE TABLE IF NOT EXISTS rate_limits (
    key TEXT NOT NULL, window INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (key, window)) WITHOUT ROWID`);
  return {
    add: db.query<{ count: number }, { key: string; window: number; n: number }>(
      `INSERT INTO rate_limits (key, window, count) VALUES ($key, $window, $n)
       ON CONFLICT (key, window) DO UPDATE SET count = count + $n RETURNING count`,
    ),
    prune: db.query<unknown, { window: number }>("DELETE FROM rate_limits WHERE window < $window"),
  };
}

const currentWindow = (now = Date.now()) => Math.floor(now / 1000 / WINDOW_SECONDS);
