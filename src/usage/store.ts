import type { UsageRecord } from "./record.ts";
import type { Bucket, Grouping, UsageRow } from "./summary.ts";

/**
 * Where usage records and their hourly rollups live: SQLite under PARLEY_DATA_DIR, or Postgres
 * with DATABASE_URL (contract 21). Both keep the same tables, written the same way.
 */
export interface UsageStore {
  /** Creates or migrates the tables (numbered migrations); the other methods call it first. */
  ready(): Promise<void>;
  /**
   * Writes records, each once (keyed on parley's own id: a batch written twice counts once), and
   * adds the new ones to their hours' rollups in the same transaction. Says how many were new.
   */
  write(records: readonly UsageRecord[]): Promise<number>;
  /** Usage since a moment (Unix seconds), from the rollups where the grouping allows; with a bucket, per hour or day. */
  summarize(since: number, by: Grouping, bucket?: Bucket): Promise<UsageRow[]>;
  /** Deletes raw records older than a moment (Unix ms); rollups stay. */
  prune(before: number): Promise<void>;
  /**
   * The events tail (contract 19's /admin/v1/events): records are numbered as they are written (a
   * cursor: SQLite's rowid, Postgres's `seq`). Up to `limit` records after `cursor`, and those
   * numbered `also` (numbers passed over before, see admin-events.ts), in cursor order: each as
   * [its cursor, its event's JSON], written by the database. The JSON has the record's columns,
   * with the same names, order and values in both stores.
   */
  eventsAfter(cursor: number, limit: number, also?: readonly number[]): Promise<[number, string][]>;
  /** The newest record's cursor; 0 when there is none. */
  newestEvent(): Promise<number>;
  /** How many records there are after `after`, up to `upto` included. */
  countEvents(after: number, upto: number): Promise<number>;
  /** Per upstream, the records since a moment (Unix ms) that reached one: contract 19's last 5 minutes. */
  upstreamLatencies(since: number): Promise<UpstreamLatency[]>;
  close(): Promise<void>;
}

export interface UpstreamLatency {
  provider: string;
  requests: number;
  /** Answered 5xx. */
  errors: number;
  p50_ms: number;
  p95_ms: number;
}

/** The q-quantile of sorted values, by nearest rank: what Postgres's percentile_disc gives. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export const HOUR_S = 3600;

/** The rollups' grouping: one row per (hour, key, model, upstream, route). Absent values are '' there. */
export interface Rollup {
  hour: number;
  key_label: string;
  model: string;
  provider: string;
  route: string;
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number | null;
}

/**
 * The records' sums per rollup row, in the rows' key order: writers that lock rows in the same
 * order never deadlock each other.
 */
export function rollupsOf(records: Iterable<UsageRecord>): Rollup[] {
  const rows = new Map<string, Rollup>();
  for (const r of records) {
    const hour = Math.floor(r.time / 1000 / HOUR_S) * HOUR_S;
    const key = `${hour}\u0000${r.key_label}\u0000${r.model ?? ""}\u0000${r.provider ?? ""}\u0000${r.route ?? ""}`;
    let row = rows.get(key);
    if (!row) {
      row = {
        hour, key_label: r.key_label, model: r.model ?? "", provider: r.provider ?? "", route: r.route ?? "",
        requests: 0, errors: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: null,
      };
      rows.set(key, row);
    }
    row.requests++;
    if (r.outcome !== "ok") row.errors++;
    row.input_tokens += r.input_tokens ?? 0;
    row.output_tokens += r.output_tokens ?? 0;
    row.cache_read_tokens += r.cache_read_tokens ?? 0;
    row.cache_write_tokens += r.cache_write_tokens ?? 0;
    if (r.cost_usd !== null) row.cost_usd = (row.cost_usd ?? 0) + r.cost_usd;
  }
  return [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}

export const ROLLUP_COLUMNS = [
  "hour", "key_label", "model", "provider", "route", "requests", "errors", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd",
] as const satisfies readonly (keyof Rollup)[];

/** Adds a rollup row's counts to the stored row: the same statement in SQLite and Postgres. */
export const ROLLUP_UPSERT = `ON CONFLICT (hour, key_label, model, provider, route) DO UPDATE SET
  requests = usage_hourly.requests + excluded.requests, errors = usage_hourly.errors + excluded.errors,
  input_tokens = usage_hourly.input_tokens + excluded.input_tokens, output_tokens = usage_hourly.output_tokens + excluded.output_tokens,
  cache_read_tokens = usage_hourly.cache_read_tokens + excluded.cache_read_tokens,
  cache_write_tokens = usage_hourly.cache_write_tokens + excluded.cache_write_tokens,
  cost_usd = CASE WHEN excluded.cost_usd IS NULL THEN usage_hourly.cost_usd ELSE COALESCE(usage_hourly.cost_usd, 0) + excluded.cost_usd END`;

/** The first whole hour at or after a moment (Unix seconds): rollups from there, raw records before. */
export const wholeHourFrom = (since: number) => Math.ceil(since / HOUR_S) * HOUR_S;

/** Ten decimals: sums of floats otherwise print as 0.30000000000000004. */
export const roundUsd = (usd: number | null) => (usd === null ? null : Number(usd.toFixed(10)));

/** Groupings the rollups do not keep: read from the raw records, within the retention (contract 21). */
export type RawOnly = "tag" | "session";
export const isRawOnly = (by: Grouping): by is RawOnly => by === "tag" || by === "session";

/** A bucket's start (Unix seconds) from a rollup's hour, and from a raw record's time (ms). */
export const BUCKET_ROLLUP: Record<Bucket, string> = { hour: "hour", day: "(hour / 86400) * 86400" };
export const BUCKET_RAW: Record<Bucket, string> = { hour: "(time / 3600000) * 3600", day: "(time / 86400000) * 86400" };
