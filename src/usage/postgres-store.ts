import type { SQL } from "bun";
import { migratePostgres } from "../lib/postgres.ts";
import { COLUMNS } from "./record.ts";
import {
  BUCKET_RAW, BUCKET_ROLLUP, isRawOnly, ROLLUP_COLUMNS, ROLLUP_UPSERT, rollupsOf, roundUsd, wholeHourFrom, type Rollup, type RawOnly, type UpstreamLatency, type UsageStore,
} from "./store.ts";
import type { Grouping, UsageRow } from "./summary.ts";

/** The usage tables in Postgres, as numbered migrations (the same tables as SQLite's, typed for Postgres). */
export const MIGRATIONS = [
  [
    `CREATE TABLE usage (
      id TEXT PRIMARY KEY, request_id TEXT, time BIGINT NOT NULL, endpoint TEXT NOT NULL, key_label TEXT NOT NULL,
      model_requested TEXT, model TEXT, provider TEXT, input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER,
      cache_write_tokens INTEGER, cost_usd DOUBLE PRECISION, status SMALLINT NOT NULL, outcome TEXT NOT NULL, latency_ms INTEGER NOT NULL,
      ttft_ms INTEGER, attempts SMALLINT NOT NULL, tag TEXT, route TEXT, session TEXT)`,
    "CREATE INDEX usage_time ON usage (time)",
    `CREATE TABLE usage_hourly (
      hour BIGINT NOT NULL, key_label TEXT NOT NULL, model TEXT NOT NULL, provider TEXT NOT NULL, route TEXT NOT NULL,
      requests BIGINT NOT NULL, errors BIGINT NOT NULL, input_tokens BIGINT NOT NULL, output_tokens BIGINT NOT NULL,
      cache_read_tokens BIGINT NOT NULL, cache_write_tokens BIGINT NOT NULL, cost_usd DOUBLE PRECISION,
      PRIMARY KEY (hour, key_label, model, provider, route))`,
  ],
  // Counters that Redis would hold (rate limits, daily budgets) when DATABASE_URL is set without REDIS_URL.
  ["CREATE TABLE counters (counter TEXT PRIMARY KEY, value BIGINT NOT NULL, expires BIGINT NOT NULL)"],
  // The events tail's cursor (SQLite has its rowid). Records already there are numbered as the table is rewritten.
  ["ALTER TABLE usage ADD COLUMN seq BIGINT GENERATED ALWAYS AS IDENTITY", "CREATE UNIQUE INDEX usage_seq ON usage (seq)"],
];

const migrated = new WeakMap<SQL, Promise<number[]>>();

/** Creates or migrates the usage tables once per connection pool (a failed try is tried again at the next call). */
export function migrateUsagePostgres(sql: SQL): Promise<number[]> {
  let done = migrated.get(sql);
  if (!done) {
    done = migratePostgres(sql, "usage_migrations", MIGRATIONS).catch((error) => {
      migrated.delete(sql);
      throw error;
    });
    migrated.set(sql, done);
  }
  return done;
}

/** Each column's Postgres type, for the arrays a write passes (one array a column: any number of rows in one statement). */
const TYPES: Record<(typeof COLUMNS)[number], string> = {
  id: "text", request_id: "text", time: "bigint", endpoint: "text", key_label: "text", model_requested: "text", model: "text",
  provider: "text", input_tokens: "int", output_tokens: "int", cache_read_tokens: "int", cache_write_tokens: "int", cost_usd: "float8",
  status: "smallint", outcome: "text", latency_ms: "int", ttft_ms: "int", attempts: "smallint", tag: "text", route: "text", session: "text",
};
const ROLLUP_TYPES: Record<keyof Rollup, string> = {
  hour: "bigint", key_label: "text", model: "text", provider: "text", route: "text", requests: "bigint", errors: "bigint",
  input_tokens: "bigint", output_tokens: "bigint", cache_read_tokens: "bigint", cache_write_tokens: "bigint", cost_usd: "float8",
};

const unnest = (columns: readonly string[], types: Record<string, string>) => `SELECT * FROM unnest(${columns.map((c, i) => `$${i + 1}::${types[c]}[]`).join(", ")})`;
const INSERT = `INSERT INTO usage (${COLUMNS.join(", ")}) ${unnest(COLUMNS, TYPES)} ON CONFLICT (id) DO NOTHING RETURNING id`;
const ROLLUP = `INSERT INTO usage_hourly (${ROLLUP_COLUMNS.join(", ")}) ${unnest(ROLLUP_COLUMNS, ROLLUP_TYPES)} ${ROLLUP_UPSERT}`;

/**
 * An event's fields: the record's columns in the order SQLite's table has them (its events are
 * built from that), so that both stores write the same JSON. `row_to_json` writes it compact, as
 * SQLite's `json_object` does; `seq` is the cursor, not a field.
 */
const EVENT_FIELDS = [
  "time", "endpoint", "key_label", "model_requested", "model", "provider", "input_tokens", "output_tokens", "cache_read_tokens",
  "cache_write_tokens", "cost_usd", "status", "outcome", "latency_ms", "ttft_ms", "attempts", "tag", "route", "session", "id", "request_id",
] as const satisfies readonly (typeof COLUMNS)[number][];
const EVENTS = `SELECT u.seq::float8, row_to_json(e)::text FROM usage u, LATERAL (SELECT ${EVENT_FIELDS.map((f) => `u.${f}`).join(", ")}) e`;
const EVENTS_AFTER = `${EVENTS} WHERE u.seq > $1 ORDER BY u.seq LIMIT $2`;
const EVENTS_AFTER_OR_ALSO = `${EVENTS} WHERE u.seq > $1 OR u.seq = ANY($3::bigint[]) ORDER BY u.seq LIMIT $2`;
/** Nearest rank, as the SQLite store's `quantile`. */
const LATENCIES = `SELECT provider, count(*)::float8 AS requests, (count(*) FILTER (WHERE status >= 500))::float8 AS errors,
    percentile_disc(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50_ms, percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95_ms
  FROM usage WHERE time >= $1 AND provider IS NOT NULL GROUP BY provider ORDER BY provider COLLATE "C"`;

const columnsOf = <T>(rows: readonly T[], columns: readonly (keyof T)[]) => columns.map((c) => rows.map((row) => row[c]));

const DAY_OF = (seconds: string) => `to_char(to_timestamp(${seconds}) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
const GROUP_RAW: Record<Grouping, string> = {
  model: "model", upstream: "provider", key: "key_label", tag: "tag", session: "session",
  // A request no file route matched is grouped as "-", as one that reached no upstream is by upstream.
  route: "COALESCE(route, '-')", day: DAY_OF("time / 1000.0"),
};
const GROUP_ROLLUP: Record<Exclude<Grouping, RawOnly>, string> = {
  model: "NULLIF(model, '')", upstream: "NULLIF(provider, '')", key: "key_label", route: "COALESCE(NULLIF(route, ''), '-')", day: DAY_OF("hour"),
};
const RAW_SUMS = `1 AS requests, CASE WHEN outcome = 'ok' THEN 0 ELSE 1 END AS e, COALESCE(input_tokens, 0) AS i, COALESCE(output_tokens, 0) AS o,
  COALESCE(cache_read_tokens, 0) AS cr, COALESCE(cache_write_tokens, 0) AS cw, cost_usd AS c`;
const ROLLUP_SUMS = "requests, errors AS e, input_tokens AS i, output_tokens AS o, cache_read_tokens AS cr, cache_write_tokens AS cw, cost_usd AS c";

/**
 * Usage in Postgres (DATABASE_URL), shared by every gateway that names it. A write is one
 * transaction of two statements, whatever the batch's size: the records as column arrays
 * (`unnest`), keeping the ids Postgres says were new, then those records' rollup rows, upserted in
 * key order (so two gateways writing at once never deadlock).
 */
export function createPostgresUsageStore(sql: SQL, log?: { info(...args: unknown[]): void }): UsageStore {
  let told = false;
  const ready = () => migrateUsagePostgres(sql).then((applied) => {
    // Said by the one process that migrated (the others found nothing left to do).
    if (applied.length && !told) log?.info(`usage: database migrated to version ${applied.at(-1)}`);
    told = true;
  });

  return {
    ready,
    async write(records) {
      if (records.length === 0) return 0;
      await ready();
      return sql.begin(async (tx) => {
        const added: { id: string }[] = await tx.unsafe(INSERT, columnsOf(records, COLUMNS));
        const ids = new Set(added.map((row) => row.id));
        const fresh = ids.size === records.length ? records : records.filter((r) => ids.has(r.id));
        if (fresh.length) await tx.unsafe(ROLLUP, columnsOf(rollupsOf(fresh), ROLLUP_COLUMNS));
        return ids.size;
      });
    },
    async summarize(since, by, bucket) {
      await ready();
      const order = by === "day" ? "\"group\" ASC" : "requests DESC, \"group\" ASC NULLS FIRST"; // SQLite's order: no group first
      const hour = wholeHourFrom(since);
      const raw = bucket ? `${BUCKET_RAW[bucket]} AS b, ` : "";
      const rolled = bucket ? `${BUCKET_ROLLUP[bucket]} AS b, ` : "";
      const from = isRawOnly(by)
        ? `SELECT ${raw}${GROUP_RAW[by]} AS g, ${RAW_SUMS} FROM usage WHERE time >= $1`
        : `SELECT ${rolled}${GROUP_ROLLUP[by]} AS g, ${ROLLUP_SUMS} FROM usage_hourly WHERE hour >= $2
           UNION ALL SELECT ${raw}${GROUP_RAW[by]} AS g, ${RAW_SUMS} FROM usage WHERE time >= $1 AND time < $2::bigint * 1000`;
      const rows: UsageRow[] = await sql.unsafe(`SELECT ${bucket ? `b::float8 AS start, ` : ""}g AS "group", SUM(requests)::float8 AS requests, ${bucket ? "SUM(e)::float8 AS errors, " : ""}
          SUM(i)::float8 AS input_tokens, SUM(o)::float8 AS output_tokens, SUM(cr)::float8 AS cache_read_tokens,
          SUM(cw)::float8 AS cache_write_tokens, SUM(c)::float8 AS cost_usd
        FROM (${from}) AS t GROUP BY ${bucket ? "1, 2 ORDER BY start ASC, " : "1 ORDER BY "}${order}`, isRawOnly(by) ? [since * 1000] : [since * 1000, hour]);
      return rows.map((row) => ({ ...row, cost_usd: roundUsd(row.cost_usd) }));
    },
    async prune(before) {
      await ready();
      await sql`DELETE FROM usage WHERE time < ${before}`;
    },
    async eventsAfter(cursor, limit, also) {
      await ready();
      return also?.length ? sql.unsafe(EVENTS_AFTER_OR_ALSO, [cursor, limit, also]).values() : sql.unsafe(EVENTS_AFTER, [cursor, limit]).values();
    },
    async newestEvent() {
      await ready();
      const [[seq]] = await sql`SELECT coalesce(max(seq), 0)::float8 FROM usage`.values();
      return seq;
    },
    async countEvents(after, upto) {
      await ready();
      const [[count]] = await sql`SELECT count(*)::float8 FROM usage WHERE seq > ${after} AND seq <= ${upto}`.values();
      return count;
    },
    async upstreamLatencies(since) {
      await ready();
      return sql.unsafe(LATENCIES, [since]) as Promise<UpstreamLatency[]>;
    },
    close: () => sql.close(),
  };
}
