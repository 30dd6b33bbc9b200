import type { Database } from "bun:sqlite";

const WINDOW_SECONDS = 60;

export interface RateDecision {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  reset: number;
  allowed: boolean;
}

/**
 * Requests per minute per key, counted in SQLite so every worker process of one server shares the
 * limit exactly. Requests that arrive in the same turn of the event loop are counted together: one
 * upsert per key and turn adds them all and returns the new total, so no request costs more than
 * one statement, and under load most cost a fraction of one.
 */
export function createRateLimiter(db: Database, rpm: number) {
  db.run(`CREATE TABLE IF NOT EXISTS rate_limits (
    key TEXT NOT NULL, window INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (key, window)) WITHOUT ROWID`);
  const add = db.query<{ count: number }, { key: string; window: number; n: number }>(
    `INSERT INTO rate_limits (key, window, count) VALUES ($key, $window, $n)
     ON CONFLICT (key, window) DO UPDATE SET count = count + $n RETURNING count`,
  );
  const prune = db.query<unknown, { window: number }>("DELETE FROM rate_limits WHERE window < $window");
  const janitor = setInterval(() => prune.run({ window: currentWindow() - 1 }), WINDOW_SECONDS * 1000);
  janitor.unref();

  let waiting = new Map<string, ((decision: RateDecision) => void)[]>();
  const flush = () => {
    const batch = waiting;
    waiting = new Map();
    const window = currentWindow();
    const reset = (window + 1) * WINDOW_SECONDS;
    for (const [key, resolvers] of batch) {
      const { count } = add.get({ key, window, n: resolvers.length })!;
      resolvers.forEach((resolve, i) => {
        const position = count - resolvers.length + i + 1;
        resolve({ limit: rpm, remaining: Math.max(0, rpm - position), reset, allowed: position <= rpm });
      });
    }
  };

  return function check(key: string): Promise<RateDecision> {
    return new Promise((resolve) => {
      if (waiting.size === 0) setImmediate(flush);
      const resolvers = waiting.get(key);
      if (resolvers) resolvers.push(resolve);
      else waiting.set(key, [resolve]);
    });
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

const currentWindow = () => Math.floor(Date.now() / 1000 / WINDOW_SECONDS);
