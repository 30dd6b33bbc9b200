import type { Database } from "bun:sqlite";
import { COLUMNS, pushRow, type UsageRecord } from "./record.ts";
import {
  BUCKET_RAW, BUCKET_ROLLUP, isRawOnly, quantile, ROLLUP_COLUMNS, ROLLUP_UPSERT, rollupsOf, roundUsd, wholeHourFrom, type RawOnly, type UpstreamLatency, type UsageStore,
} from "./store.ts";
import type { Grouping, UsageRow } from "./summary.ts";

/**
 * Numbered migrations of the usage tables, applied in place to whatever parley.db holds: 1 is the
 * table as every earlier parley made it (with the `route` and `session` columns it gained later), 2 adds the
 * request ids and the hourly rollups, filled from the records already there.
 */
const MIGRATIONS: ((db: Database) => void)[] = [
  (db) => {
    db.run(`CREATE TABLE IF NOT EXISTS usage (
      time INTEGER NOT NULL, endpoint TEXT NOT NULL, key_label TEXT NOT NULL, model_requested TEXT, model TEXT, provider TEXT,
      input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER, cost_usd REAL,
      status INTEGER NOT NULL, outcome TEXT NOT NULL, latency_ms INTEGER NOT NULL, ttft_ms INTEGER, attempts INTEGER NOT NULL, tag TEXT)`);
    db.run("CREATE INDEX IF NOT EXISTS usage_time ON usage (time)");
    addMissing(db, [["route", "TEXT"], ["session", "TEXT"]]);
  },
  (db) => {
    addMissing(db, [["id", "TEXT"], ["request_id", "TEXT"]]);
    db.run("CREATE UNIQUE INDEX IF NOT EXISTS usage_id ON usage (id)");
    db.run(`CREATE TABLE IF NOT EXISTS usage_hourly (
      hour INTEGER NOT NULL, key_label TEXT NOT NULL, model TEXT NOT NULL, provider TEXT NOT NULL, route TEXT NOT NULL,
      requests INTEGER NOT NULL, errors INTEGER NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
      cache_read_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL, cost_usd REAL,
      PRIMARY KEY (hour, key_label, model, provider, route)) WITHOUT ROWID`);
    db.run(`INSERT INTO usage_hourly SELECT (time / 3600000) * 3600, key_label, COALESCE(model, ''), COALESCE(provider, ''), COALESCE(route, ''),
      COUNT(*), SUM(outcome <> 'ok'), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0),
      COALESCE(SUM(cache_read_tokens), 0), COALESCE(SUM(cache_write_tokens), 0), SUM(cost_usd)
      FROM usage GROUP BY 1, 2, 3, 4, 5 ${ROLLUP_UPSERT}`);
  },
];

export const SQLITE_VERSION = MIGRATIONS.length;

function addMissing(db: Database, columns: [string, string][]): void {
  const has = new Set(db.query<{ name: string }, []>("SELECT name FROM pragma_table_info('usage')").all().map((c) => c.name));
  for (const [name, type] of columns) if (!has.has(name)) db.run(`ALTER TABLE usage ADD COLUMN ${name} ${type}`);
}

/** Brings the usage tables up to date; one worker at a time (the write lock), each migration once. */
export function migrateUsage(db: Database): void {
  db.run("CREATE TABLE IF NOT EXISTS usage_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
  const current = () => db.query<{ v: number | null }, []>("SELECT MAX(version) AS v FROM usage_migrations").get()?.v ?? 0;
  if (current() >= MIGRATIONS.length) return;
  db.transaction(() => {
    for (let version = current() + 1; version <= MIGRATIONS.length; version++) {
      MIGRATIONS[version - 1]!(db);
      db.query("INSERT INTO usage_migrations (version, applied_at) VALUES (?, ?)").run(version, Date.now());
    }
  }).immediate();
}

const ROWS_PER_INSERT = 64;

const GROUP_RAW: Record<Grouping, string> = {
  model: "model", upstream: "provider", key: "key_label", tag: "tag", session: "session",
  // A request no file route matched is grouped as "-", as one that reached no upstream is by upstream.
  route: "COALESCE(route, '-')",
  day: "strftime('%Y-%m-%d', time / 1000, 'unixepoch')",
};
const GROUP_ROLLUP: Record<Exclude<Grouping, RawOnly>, string> = {
  model: "NULLIF(model, '')", upstream: "NULLIF(provider, '')", key: "key_label", route: "COALESCE(NULLIF(route, ''), '-')",
  day: "strftime('%Y-%m-%d', hour, 'unixepoch')",
};
const RAW_SUMS = `1 AS requests, CASE WHEN outcome = 'ok' THEN 0 ELSE 1 END AS e, COALESCE(input_tokens, 0) AS i, COALESCE(output_tokens, 0) AS o,
  COALESCE(cache_read_tokens, 0) AS cr, COALESCE(cache_write_tokens, 0) AS cw, cost_usd AS c`;
const ROLLUP_SUMS = "requests, errors AS e, input_tokens AS i, output_tokens AS o, cache_read_tokens AS cr, cache_write_tokens AS cw, cost_usd AS c";

/**
 * Usage in parley.db. A write lays the records' values out ROWS_PER_INSERT to a statement (binding
 * many rows at once, as one list, cost two thirds of a statement per row), skips ids already
 * there and adds the new records to the rollups, all in one transaction.
 */
export function createSqliteUsageStore(database: () => Database): UsageStore {
  let write: ((records: readonly UsageRecord[]) => number) | undefined;
  let reads: ReturnType<typeof prepareReads> | undefined;
  let migrated = false;
  const db = () => {
    const handle = database();
    if (!migrated) migrateUsage(handle);
    migrated = true;
    return handle;
  };
  const read = () => (reads ??= prepareReads(db()));

  function prepare(handle: Database) {
    const row = `(${COLUMNS.map(() => "?").join(", ")})`;
    const insert = (rows: number) =>
      handle.query(`INSERT INTO usage (${COLUMNS.join(", ")}) VALUES ${Array(rows).fill(row).join(", ")} ON CONFLICT (id) DO NOTHING`);
    const many = insert(ROWS_PER_INSERT);
    const one = insert(1);
    const rollup = handle.query(`INSERT INTO usage_hourly (${ROLLUP_COLUMNS.join(", ")}) VALUES (${ROLLUP_COLUMNS.map(() => "?").join(", ")}) ${ROLLUP_UPSERT}`);
    const values = (records: readonly UsageRecord[], from: number, to: number) => {
      const list: unknown[] = [];
      for (let i = from; i < to; i++) pushRow(list, records[i]!);
      return list as never;
    };
    // Rows a statement added take the next rowids, in the transaction's write lock: the newest `n`.
    const newest = handle.query<{ id: string }, [number]>("SELECT id FROM usage ORDER BY rowid DESC LIMIT ?");
    return handle.transaction((records: readonly UsageRecord[]) => {
      // Every row new (the usual case) is told by the count alone; RETURNING on every write cost
      // 2 µs a record. Only a statement that skipped some asks which rows it added.
      let fresh: UsageRecord[] | undefined;
      for (let at = 0; at < records.length;) {
        const size = records.length - at >= ROWS_PER_INSERT ? ROWS_PER_INSERT : 1;
        const { changes } = (size === 1 ? one : many).run(values(records, at, at + size));
        if (changes !== size || fresh) {
          fresh ??= records.slice(0, at);
          const added = changes === size ? undefined : new Set(changes === 0 ? [] : newest.all(changes).map((row) => row.id));
          for (let i = at; i < at + size; i++) if (!added || added.has(records[i]!.id)) fresh.push(records[i]!);
        }
        at += size;
      }
      const added = fresh ?? records;
      for (const r of rollupsOf(added)) rollup.run(...(ROLLUP_COLUMNS.map((c) => r[c]) as []));
      return added.length;
    });
  }

  return {
    async ready() {
      db();
    },
    async write(records) {
      if (records.length === 0) return 0;
      return (write ??= prepare(db()))(records);
    },
    async summarize(since, by, bucket) {
      const order = by === "day" ? "\"group\" ASC" : "requests DESC, \"group\" ASC";
      const hour = wholeHourFrom(since);
      const raw = bucket ? `${BUCKET_RAW[bucket]} AS b, ` : "";
      const rolled = bucket ? `${BUCKET_ROLLUP[bucket]} AS b, ` : "";
      const from = isRawOnly(by)
        ? `SELECT ${raw}${GROUP_RAW[by]} AS g, ${RAW_SUMS} FROM usage WHERE time >= $since`
        : `SELECT ${rolled}${GROUP_ROLLUP[by]} AS g, ${ROLLUP_SUMS} FROM usage_hourly WHERE hour >= $hour
           UNION ALL SELECT ${raw}${GROUP_RAW[by]} AS g, ${RAW_SUMS} FROM usage WHERE time >= $since AND time < $hourMs`;
      const rows = db().query<UsageRow, Record<string, number>>(`SELECT ${bucket ? `b AS start, ` : ""}g AS "group", SUM(requests) AS requests, ${bucket ? "SUM(e) AS errors, " : ""}
          SUM(i) AS input_tokens, SUM(o) AS output_tokens, SUM(cr) AS cache_read_tokens, SUM(cw) AS cache_write_tokens, SUM(c) AS cost_usd
        FROM (${from}) GROUP BY ${bucket ? "1, 2 ORDER BY start ASC, " : "1 ORDER BY "}${order}`)
        .all(isRawOnly(by) ? { since: since * 1000 } : { since: since * 1000, hour, hourMs: hour * 1000 });
      return rows.map((row) => ({ ...row, cost_usd: roundUsd(row.cost_usd) }));
    },
    async prune(before) {
      db().query("DELETE FROM usage WHERE time < ?").run(before);
    },
    async eventsAfter(cursor, limit, also) {
      const { after, afterOrAlso } = read();
      const rows = also?.length ? afterOrAlso.values({ after: cursor, limit, also: JSON.stringify(also) }) : after.values({ after: cursor, limit });
      return rows as [number, string][];
    },
    async newestEvent() {
      return (read().newest.values() as [[number]])[0][0];
    },
    async countEvents(after, upto) {
      return (read().between.values({ after, upto }) as [[number]])[0][0];
    },
    async upstreamLatencies(since) {
      const rows = read().latencies.all({ since }) as { provider: string; latency_ms: number; status: number }[];
      const byUpstream: { provider: string; latency: number[]; errors: number }[] = [];
      for (const row of rows) {
        let entry = byUpstream.at(-1);
        if (entry?.provider !== row.provider) byUpstream.push((entry = { provider: row.provider, latency: [], errors: 0 }));
        entry.latency.push(row.latency_ms);
        if (row.status >= 500) entry.errors++;
      }
      return byUpstream.map(({ provider, latency, errors }): UpstreamLatency => ({
        provider, requests: latency.length, errors, p50_ms: quantile(latency, 0.5), p95_ms: quantile(latency, 0.95),
      }));
    },
    async close() {},
  };
}

/**
 * The events tail and the latency figures. SQLite writes each event's JSON itself, over the
 * table's columns as they are: a row read as a JS object and then stringified cost the worker
 * serving the stream a third more. A record's rowid is its cursor: writers take turns, so records
 * are numbered in the order they become visible.
 */
function prepareReads(db: Database) {
  const columns = db.query<{ name: string }, []>("SELECT name FROM pragma_table_info('usage')").all().map(({ name }) => `'${name}', "${name}"`);
  const events = `SELECT rowid, json_object(${columns.join(", ")}) FROM usage`;
  return {
    after: db.query(`${events} WHERE rowid > $after ORDER BY rowid LIMIT $limit`),
    afterOrAlso: db.query(`${events} WHERE rowid > $after OR rowid IN (SELECT value FROM json_each($also)) ORDER BY rowid LIMIT $limit`),
    newest: db.query("SELECT coalesce(max(rowid), 0) FROM usage"),
    between: db.query("SELECT count(*) FROM usage WHERE rowid > $after AND rowid <= $upto"),
    latencies: db.query("SELECT provider, latency_ms, status FROM usage WHERE time >= $since AND provider IS NOT NULL ORDER BY provider, latency_ms"),
  };
}
