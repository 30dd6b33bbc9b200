import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/lib/db.ts";
import { connectPostgres } from "../../src/lib/postgres.ts";
import { createPostgresUsageStore } from "../../src/usage/postgres-store.ts";
import type { UsageRecord } from "../../src/usage/recorder.ts";
import { createSqliteUsageStore } from "../../src/usage/sqlite-store.ts";
import { GROUPINGS } from "../../src/usage/summary.ts";
import { startPostgres } from "../lib/postgres.ts";

const pg = await startPostgres();
afterAll(() => pg.dispose());

const HOUR_MS = 3_600_000;
// Six hours back from a moment 20 minutes into an hour: the first hour is read in part.
const start = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 6 * HOUR_MS + 20 * 60_000;
const record = (i: number): UsageRecord => ({
  id: `r${i}`, request_id: i % 2 ? `client-${i}` : null, time: start + i * 11_000, endpoint: "/v1/chat/completions", key_label: `key-${i % 3}`,
  model_requested: `model-${i % 4}`, model: i % 5 ? `model-${i % 4}` : null, provider: i % 2 ? "alpha" : "beta", input_tokens: i, output_tokens: 2 * i,
  cache_read_tokens: i % 7, cache_write_tokens: i % 2, cost_usd: i % 4 ? i / 1e6 : null, status: i % 9 ? 200 : 503, outcome: i % 9 ? "ok" : "error",
  latency_ms: i % 50, ttft_ms: null, attempts: 1, tag: i % 3 ? `tag-${i % 5}` : null, route: i % 4 ? null : `route-${i % 8}`, session: i % 6 ? `s${i % 11}` : null,
});
const records = Array.from({ length: 2000 }, (_, i) => record(i));

async function stores() {
  const sql = connectPostgres(await pg.database(`store_${Math.random().toString(36).slice(2)}`));
  const db = openDatabase(mkdtempSync(join(tmpdir(), "parley-store-")));
  return { postgres: createPostgresUsageStore(sql), sqlite: createSqliteUsageStore(() => db), sql };
}

describe("usage in Postgres and in SQLite (contract 21)", () => {
  test("a batch written twice counts once, in the records and in the rollups", async () => {
    const { postgres, sqlite, sql } = await stores();
    for (const store of [postgres, sqlite]) {
      expect(await store.write(records.slice(0, 1500))).toBe(1500);
      // A retried batch that overlaps the first: only the new half is new.
      expect(await store.write(records.slice(1000))).toBe(500);
      const [total] = await store.summarize(0, "key").then((rows) => [rows.reduce((n, row) => n + row.requests, 0)]);
      expect(total).toBe(2000);
    }
    expect(await sql`SELECT COUNT(*)::int AS n, SUM(requests)::int AS r FROM usage_hourly`).toEqual([{ n: expect.any(Number), r: 2000 }]);
    await postgres.close();
  });

  test("every grouping, from the rollups (and the first hour's raw part), gives SQLite's answer and the raw records' sums", async () => {
    const { postgres, sqlite } = await stores();
    await postgres.write(records);
    await sqlite.write(records);
    const since = Math.floor((start + 500 * 11_000) / 1000);
    const kept = records.filter((r) => r.time >= since * 1000);
    for (const by of GROUPINGS) {
      const fromPostgres = await postgres.summarize(since, by);
      expect(fromPostgres).toEqual(await sqlite.summarize(since, by));
      expect(fromPostgres.reduce((n, row) => n + row.requests, 0)).toBe(kept.length);
      expect(fromPostgres.reduce((n, row) => n + row.input_tokens, 0)).toBe(kept.reduce((n, r) => n + r.input_tokens!, 0));
    }
    const byModel = await postgres.summarize(since, "model");
    const unpriced = kept.filter((r) => r.model === null);
    expect(byModel.find((row) => row.group === null)).toEqual({
      group: null, requests: unpriced.length, input_tokens: unpriced.reduce((n, r) => n + r.input_tokens!, 0),
      output_tokens: unpriced.reduce((n, r) => n + r.output_tokens!, 0), cache_read_tokens: unpriced.reduce((n, r) => n + r.cache_read_tokens!, 0),
      cache_write_tokens: unpriced.reduce((n, r) => n + r.cache_write_tokens!, 0),
      cost_usd: Number(unpriced.reduce((n, r) => n + (r.cost_usd ?? 0), 0).toFixed(10)),
    });
    await postgres.close();
  });

  test("bucket=hour|day: one row per bucket and group, the same in both stores, adding up to the records", async () => {
    const { postgres, sqlite } = await stores();
    await postgres.write(records);
    await sqlite.write(records);
    const since = Math.floor((start + 500 * 11_000) / 1000);
    const kept = records.filter((r) => r.time >= since * 1000);
    for (const bucket of ["hour", "day"] as const) {
      for (const by of GROUPINGS) {
        const rows = await postgres.summarize(since, by, bucket);
        expect(rows).toEqual(await sqlite.summarize(since, by, bucket));
        expect(rows.reduce((n, row) => n + row.requests, 0)).toBe(kept.length);
      }
    }
    const hours = await postgres.summarize(since, "key", "hour");
    // Each record in its hour: the rows' starts are whole hours, in order, and each hour's count is its records'.
    const perHour = new Map<number, number>();
    for (const r of kept) perHour.set(Math.floor(r.time / 3_600_000) * 3600, (perHour.get(Math.floor(r.time / 3_600_000) * 3600) ?? 0) + 1);
    const counted = new Map<number, number>();
    for (const row of hours) counted.set(row.start!, (counted.get(row.start!) ?? 0) + row.requests);
    expect([...counted]).toEqual([...perHour].sort(([a], [b]) => a - b));
    // The error rate's numerator (contract 20's plot): the requests that did not end well, per bucket.
    expect(hours.reduce((n, row) => n + row.errors!, 0)).toBe(kept.filter((r) => r.outcome !== "ok").length);
    expect((await sqlite.summarize(since, "key", "day")).reduce((n, row) => n + row.errors!, 0)).toBe(kept.filter((r) => r.outcome !== "ok").length);
    expect((await postgres.summarize(since, "key"))[0]).not.toHaveProperty("errors");
    await postgres.close();
  });

  test("the events tail and the last minutes' latencies read the same from both stores: each record's JSON, its cursor, the figures", async () => {
    const { postgres, sqlite } = await stores();
    await postgres.write(records);
    await sqlite.write(records);
    const fromPostgres = await postgres.eventsAfter(10, 5000);
    const fromSqlite = await sqlite.eventsAfter(10, 5000);
    expect(fromPostgres.map(([cursor]) => cursor)).toEqual(Array.from({ length: records.length - 10 }, (_, i) => 11 + i));
    expect(fromPostgres.map(([cursor]) => cursor)).toEqual(fromSqlite.map(([cursor]) => cursor));
    // The same fields in the same order, the same values (numbers as numbers, nulls as null): each the record as written.
    const parsed = fromPostgres.map(([, json]) => JSON.parse(json));
    expect(parsed).toEqual(fromSqlite.map(([, json]) => JSON.parse(json)));
    expect(parsed).toEqual(records.slice(10));
    for (let i = 0; i < 20; i++) expect(Object.keys(parsed[i])).toEqual(Object.keys(JSON.parse(fromSqlite[i]![1])));
    expect(parsed.some((event) => event.cost_usd === null) && parsed.some((event) => typeof event.cost_usd === "number")).toBe(true);
    for (const store of [postgres, sqlite]) {
      expect(await store.newestEvent()).toBe(records.length);
      expect(await store.countEvents(100, 250)).toBe(150);
      expect(await store.countEvents(records.length, records.length + 10)).toBe(0);
      // Cursors passed over before are read again beside the ones after.
      expect((await store.eventsAfter(1990, 100, [3, 5, 2001])).map(([cursor]) => cursor)).toEqual([3, 5, 1991, 1992, 1993, 1994, 1995, 1996, 1997, 1998, 1999, 2000]);
      expect(await store.eventsAfter(records.length, 100)).toEqual([]);
    }
    const since = start + 1000 * 11_000;
    const figures = await postgres.upstreamLatencies(since);
    expect(figures).toEqual(await sqlite.upstreamLatencies(since));
    const kept = records.filter((r) => r.time >= since);
    for (const provider of ["alpha", "beta"]) {
      const latency = kept.filter((r) => r.provider === provider).map((r) => r.latency_ms).sort((a, b) => a - b);
      expect(figures.find((row) => row.provider === provider)).toEqual({
        provider, requests: latency.length, errors: kept.filter((r) => r.provider === provider && r.status >= 500).length,
        p50_ms: latency[Math.ceil(latency.length * 0.5) - 1]!, p95_ms: latency[Math.ceil(latency.length * 0.95) - 1]!,
      });
    }
    expect(await postgres.upstreamLatencies(records.at(-1)!.time + 1)).toEqual([]);
    await postgres.close();
  });

  test("pruning deletes raw records only: by=tag forgets them, the rollups still count them", async () => {
    const { postgres } = await stores();
    await postgres.write(records);
    await postgres.prune(start + 1000 * 11_000);
    expect((await postgres.summarize(0, "tag")).reduce((n, row) => n + row.requests, 0)).toBe(1000);
    expect((await postgres.summarize(0, "model")).reduce((n, row) => n + row.requests, 0)).toBe(2000);
    await postgres.close();
  });

  test("ten stores migrating one new database at once: one migration run, no error", async () => {
    const url = await pg.database("migrate_once");
    const logs: string[] = [];
    const all = Array.from({ length: 10 }, () => createPostgresUsageStore(new SQL(url, { max: 1 }), { info: (line: unknown) => logs.push(String(line)) }));
    await Promise.all(all.map((store) => store.ready()));
    expect(logs).toEqual(["usage: database migrated to version 3"]);
    const sql = new SQL(url);
    expect(await sql`SELECT version FROM usage_migrations ORDER BY version`).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }]);
    await sql.close();
    await Promise.all(all.map((store) => store.close()));
  });
});
