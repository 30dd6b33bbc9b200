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
 * limit. One statement per request: an upsert that returns the new count of the current window.
 */
export function createRateLimiter(db: Database, rpm: number) {
  db.run(`CREATE TABLE IF NOT EXISTS rate_limits (
    key TEXT NOT NULL, window INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (key, window)) WITHOUT ROWID`);
  const hit = db.query<{ count: number }, { key: string; window: number }>(
    `INSERT INTO rate_limits (key, window, count) VALUES ($key, $window, 1)
     ON CONFLICT (key, window) DO UPDATE SET count = count + 1 RETURNING count`,
  );
  const prune = db.query<unknown, { window: number }>("DELETE FROM rate_limits WHERE window < $window");
  const janitor = setInterval(() => prune.run({ window: currentWindow() - 1 }), WINDOW_SECONDS * 1000);
  janitor.unref();

  return function check(key: string): RateDecision {
    const window = currentWindow();
    const { count } = hit.get({ key, window })!;
    return { limit: rpm, remaining: Math.max(0, rpm - count), reset: (window + 1) * WINDOW_SECONDS, allowed: count <= rpm };
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

const currentWindow = () => Math.floor(Date.now() / 1000 / WINDOW_SECONDS);
