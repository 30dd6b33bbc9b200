import type { Database, Statement } from "bun:sqlite";
import type { Logger } from "../log.ts";

/** One completion, as contract 12 has it. Never content, never the key itself. */
export interface UsageRecord {
  /** Unix milliseconds when the request came in. */
  time: number;
  endpoint: string;
  key_label: string;
  model_requested: string | null;
  /** The model that answered (after aliases and fallbacks), else the one asked for. */
  model: string | null;
  provider: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  cost_usd: number | null;
  status: number;
  /** ok, error (no answer), broken (the upstream's stream failed) or cancelled (the client left). */
  outcome: "ok" | "error" | "broken" | "cancelled";
  latency_ms: number;
  ttft_ms: number | null;
  attempts: number;
  tag: string | null;
}

const COLUMNS = [
  "time", "endpoint", "key_label", "model_requested", "model", "provider", "input_tokens", "output_tokens", "cache_read_tokens",
  "cache_write_tokens", "cost_usd", "status", "outcome", "latency_ms", "ttft_ms", "attempts", "tag",
] as const satisfies readonly (keyof UsageRecord)[];

const WIDTH = COLUMNS.length;
const ROWS_PER_INSERT = 64;
const FLUSH_EVERY_MS = 1000;
/** Full batches that make a queue worth writing at once (512 records). */
const FLUSH_AT_BATCHES = 8;
const DAY_MS = 24 * 60 * 60 * 1000;

export function createUsageTable(db: Database): void {
  db.run(`CREATE TABLE IF NOT EXISTS usage (
    time INTEGER NOT NULL, endpoint TEXT NOT NULL, key_label TEXT NOT NULL, model_requested TEXT, model TEXT, provider TEXT,
    input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER, cost_usd REAL,
    status INTEGER NOT NULL, outcome TEXT NOT NULL, latency_ms INTEGER NOT NULL, ttft_ms INTEGER, attempts INTEGER NOT NULL, tag TEXT)`);
  db.run("CREATE INDEX IF NOT EXISTS usage_time ON usage (time)");
}

/**
 * Usage records go into a queue and reach SQLite in one transaction a second (or soon after 512
 * are queued, or when the app stops), so a request never waits for a write. Records older than
 * the retention are deleted at the first write and then once a day.
 *
 * The queue holds each record's column values, ROWS_PER_INSERT records to a batch, ready to be
 * bound as one statement's parameters: binding many rows at once, from arrays built as the records
 * came and given as one list (not spread as arguments), cost two thirds of a statement per row (bench).
 */
export function createRecorder(database: () => Database, retentionDays: number, log: Logger) {
  let batches: unknown[][] = [];
  let open: unknown[] = [];
  let timer: Timer | undefined;
  let insert: ((full: unknown[][], rest: unknown[]) => void) | undefined;
  let prunedAt = 0;

  function prepare(db: Database) {
    createUsageTable(db);
    const row = `(${COLUMNS.map(() => "?").join(", ")})`;
    const statement = (rows: number): Statement => db.query(`INSERT INTO usage (${COLUMNS.join(", ")}) VALUES ${Array(rows).fill(row).join(", ")}`);
    const many = statement(ROWS_PER_INSERT);
    const one = statement(1);
    return db.transaction((full: unknown[][], rest: unknown[]) => {
      for (const batch of full) many.run(batch);
      for (let at = 0; at < rest.length; at += WIDTH) one.run(rest.slice(at, at + WIDTH));
    });
  }

  function prune(db: Database, now: number) {
    prunedAt = now;
    db.query("DELETE FROM usage WHERE time < $before").run({ before: now - retentionDays * DAY_MS });
  }

  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (batches.length === 0 && open.length === 0) return;
    const [full, rest] = [batches, open];
    [batches, open] = [[], []];
    try {
      const db = database();
      (insert ??= prepare(db))(full, rest);
      const now = Date.now();
      if (now - prunedAt >= DAY_MS) prune(db, now);
    } catch (error) {
      log.error(`usage records lost (${full.length * ROWS_PER_INSERT + rest.length / WIDTH}):`, error);
    }
  }

  return {
    add(record: UsageRecord): void {
      for (const column of COLUMNS) open.push(record[column]);
      if (open.length === ROWS_PER_INSERT * WIDTH) {
        batches.push(open);
        open = [];
        // A full queue is written once the request that filled it has its answer.
        if (batches.length === FLUSH_AT_BATCHES) setImmediate(flush);
      }
      if (!timer) {
        timer = setTimeout(flush, FLUSH_EVERY_MS);
        timer.unref();
      }
    },
    /** Writes what is queued now: before a summary is read, and when the app stops. */
    flush,
  };
}

export type Recorder = ReturnType<typeof createRecorder>;
