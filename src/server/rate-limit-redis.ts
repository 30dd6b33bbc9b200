import { unavailable } from "../errors.ts";
import {
  currentWindow, grant, leaseFor, leaseSize, pruneLeases, refused, take, WINDOW_SECONDS, type Lease, type RateDecision,
} from "./rate-limit.ts";
import { ADD_WITH_EXPIRY, RedisUnreachable, type OnRedisError, type Redis } from "../lib/redis.ts";

interface RedisLease extends Lease {
  /** The claim in flight: requests arriving meanwhile wait for it instead of sending their own. */
  claim?: Promise<void>;
  /** Requests of this process waiting for a claim: the next claim is at least this big. */
  waiting: number;
}

/**
 * Requests per minute per key, counted in Redis (or Postgres) so every gateway sharing it enforces one limit.
 * Leases as with SQLite (see `leaseSize`): a busy key costs one round trip per lease, and requests
 * that arrive while a claim is on its way share it. When Redis cannot be asked, `onError` decides:
 * "open" lets the request through, "closed" answers 503.
 */
export function createRedisRateLimiter(redis: Redis, rpm: number, onError: OnRedisError) {
  const add = async (counter: string, n: number, ttlS: number) =>
    Number(await redis.run(ADD_WITH_EXPIRY, [`parley:rate:${counter}`], [String(n), String(ttlS)]));
  return createSharedRateLimiter(add, rpm, onError, { store: "Redis", outage: (error) => error instanceof RedisUnreachable });
}

/** Where a shared limiter counts: Redis, or Postgres (DATABASE_URL without REDIS_URL); which errors mean it cannot be asked. */
export interface SharedCounts {
  store: string;
  outage: (error: unknown) => boolean;
}

/** The limiter over any shared counter store: `add` adds to a counter made with a lifetime and returns its total. */
export function createSharedRateLimiter(add: (counter: string, n: number, ttlS: number) => Promise<number>, rpm: number, onError: OnRedisError, counts: SharedCounts) {
  const leases = new Map<string, RedisLease>();
  const janitor = setInterval(() => pruneLeases(leases, currentWindow()), WINDOW_SECONDS * 1000);
  janitor.unref();

  async function claim(key: string, lease: RedisLease): Promise<void> {
    const now = Date.now();
    const size = leaseSize(lease, now, rpm, lease.waiting);
    const count = await add(`${key}:${lease.window}`, size, 2 * WINDOW_SECONDS);
    grant(lease, count, size, now, rpm);
  }

  return async function check(key: string): Promise<RateDecision> {
    for (;;) {
      const window = currentWindow();
      const lease = leaseFor(leases, key, window, { waiting: 0 });
      if (lease.left > 0) return take(lease, rpm);
      // Every request of this window is spoken for, here or on another gateway: no need to ask.
      if (lease.counted >= rpm) return refused(rpm, window);
      lease.waiting++;
      try {
        await (lease.claim ??= claim(key, lease).finally(() => (lease.claim = undefined)));
      } catch (error) {
        if (!counts.outage(error)) throw error;
        return unknown(window);
      } finally {
        lease.waiting--;
      }
    }
  };

  function unknown(window: number): RateDecision {
    if (onError === "closed") {
      throw unavailable("Rate limits cannot be checked right now; try again shortly.", {
        details: `the rate-limit store (${counts.store}) is unreachable`,
        headers: { "retry-after": "1" },
      });
    }
    return { limit: rpm, reset: (window + 1) * WINDOW_SECONDS, allowed: true };
  }
}
