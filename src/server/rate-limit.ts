import type { Database } from "bun:sqlite";

export const WINDOW_SECONDS = 60;
/** A key asking again within this long after its last claim is busy: its next claim is bigger. */
const BUSY_MS = 1000;
const MAX_LEASE = 256;

export interface RateDecision {
  limit: number;
  /** Absent when the shared count could not be asked (Redis away, RATE_LIMIT_ON_REDIS_ERROR=open). */
  remaining?: number;
  /** Unix seconds when the window resets. */
  reset: number;
  allowed: boolean;
}

export interface Lease {
  window: number;
  /** Requests claimed from the shared count and not used yet. */
  left: number;
  /** The shared count after this process's last claim. */
  counted: number;
  size: number;
  claimedAt: number;
}

/** A key's limit, checked per request; SQLite answers at once, Redis over the network. */
export type RateLimiter = (key: string) => RateDecision | Promise<RateDecision>;

/**
 * Requests per minute per key, counted in SQLite so every worker process of one server shares one
 * limit. A process claims requests from the shared count in leases (see `leaseSize`), so a busy key
 * costs one statement per lease instead of per request.
 */
export function createRateLimiter(database: () => Database, rpm: number) {
  // The database is opened on the first request, so an idle server holds no SQLite memory.
  let statements: ReturnType<typeof prepare> | undefined;
  const leases = new Map<string, Lease>();
  const janitor = setInterval(() => {
    const window = currentWindow();
    pruneLeases(leases, window);
    try {
      statements?.prune.run({ window: window - 1 });
    } catch {
      // The app closed the database: it has stopped, and so does the janitor.
      clearInterval(janitor);
    }
  }, WINDOW_SECONDS * 1000);
  janitor.unref();

  return function check(key: string): RateDecision {
    const now = Date.now();
    const window = currentWindow(now);
    const lease = leaseFor(leases, key, window, {});
    if (lease.left === 0) {
      const size = leaseSize(lease, now, rpm);
      const { count } = (statements ??= prepare(database())).add.get({ key, window, n: size })!;
      if (!grant(lease, count, size, now, rpm)) return refused(rpm, window);
    }
    return take(lease, rpm);
  };
}

/** This process's lease on a key for a window, fresh when the window has moved on. */
export function leaseFor<T extends Lease>(leases: Map<string, T>, key: string, window: number, extra: Omit<T, keyof Lease>): T {
  const lease = leases.get(key);
  if (lease && lease.window === window) return lease;
  const fresh = { ...extra, window, left: 0, counted: 0, size: 1, claimedAt: 0 } as T;
  leases.set(key, fresh);
  return fresh;
}

/**
 * How many requests to claim next: one for a key used now and then, twice the last claim for a busy
 * key (or as many as are waiting), up to 256, never more than a sixteenth of what is left, so the
 * limit is never exceeded and several processes near it share what remains.
 */
export function leaseSize(lease: Lease, now: number, rpm: number, waiting = 1): number {
  const busy = now - lease.claimedAt < BUSY_MS;
  const wanted = Math.max(busy ? lease.size * 2 : 1, waiting);
  return Math.max(1, Math.min(wanted, MAX_LEASE, Math.floor((rpm - lease.counted) / 16)));
}

/** Records a claim of `size` that brought the shared count to `count`; false when none is within the limit. */
export function grant(lease: Lease, count: number, size: number, now: number, rpm: number): boolean {
  lease.size = size;
  lease.counted = count;
  lease.claimedAt = now;
  // The claim's requests are the positions count-size+1 .. count; only those within the limit count.
  lease.left = Math.max(0, Math.min(size, rpm - (count - size)));
  return lease.left > 0;
}

export function take(lease: Lease, rpm: number): RateDecision {
  lease.left--;
  const reset = (lease.window + 1) * WINDOW_SECONDS;
  return { limit: rpm, remaining: Math.max(0, rpm - lease.counted + lease.left), reset, allowed: true };
}

export const refused = (rpm: number, window: number): RateDecision =>
  ({ limit: rpm, remaining: 0, reset: (window + 1) * WINDOW_SECONDS, allowed: false });

export function pruneLeases(leases: Map<string, Lease>, window: number): void {
  for (const [key, lease] of leases) if (lease.window < window) leases.delete(key);
}

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

export const currentWindow = (now = Date.now()) => Math.floor(now / 1000 / WINDOW_SECONDS);
