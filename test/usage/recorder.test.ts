import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/lib/db.ts";
import { createLogger } from "../../src/log.ts";
import { createRecorder, type UsageRecord } from "../../src/usage/recorder.ts";
import { createSqliteUsageStore } from "../../src/usage/sqlite-store.ts";

// Recent: older records go at the first write (retention).
const since = Date.now() - 60_000;
const record = (i: number): UsageRecord => ({
  id: `r${i}`, request_id: i % 2 ? `client-${i}` : null, time: since + i, endpoint: i % 2 ? "/v1/messages" : "/v1/chat/completions", key_label: `key-${i % 3}`,
  model_requested: `model-${i}`, model: i % 5 ? `model-${i}` : null, provider: "alpha", input_tokens: i, output_tokens: 2 * i,
  cache_read_tokens: i % 7, cache_write_tokens: 0, cost_usd: i % 4 ? i / 1e6 : null, status: 200, outcome: "ok",
  latency_ms: i % 50, ttft_ms: i % 2 ? i % 30 : null, attempts: 1 + (i % 2), tag: i % 3 ? `tag-${i}` : null, route: i % 4 ? null : `route-${i % 8}`, session: i % 3 ? null : `${i}`.padStart(16, "0"),
});

describe("usage records reach SQLite in batches", () => {
  test("every record, each column in its place, whatever the batch it fell in (full, partial, the queue filled)", async () => {
    const db = openDatabase(mkdtempSync(join(tmpdir(), "parley-recorder-")));
    const recorder = createRecorder(createSqliteUsageStore(() => db), { retentionDays: 90, bufferMax: 100_000, log: createLogger("silent") });
    const written = Array.from({ length: 2500 }, (_, i) => record(i));
    await createSqliteUsageStore(() => db).ready();
    const count = () => db.query("SELECT count(*) AS n FROM usage").get();
    for (const r of written.slice(0, 2100)) recorder.add(r);
    // The 2048th record queued a write, not in the request that added it but right after.
    expect(count()).toEqual({ n: 0 });
    await Bun.sleep(0);
    expect(count()).toEqual({ n: 2100 });
    for (const r of written.slice(2100)) recorder.add(r);
    await recorder.flush();
    expect(db.query("SELECT * FROM usage ORDER BY time").all()).toEqual(written);
    db.close();
  });

  test("nothing queued, nothing written; a flush with a few records writes them", async () => {
    const db = openDatabase(mkdtempSync(join(tmpdir(), "parley-recorder-")));
    const recorder = createRecorder(createSqliteUsageStore(() => db), { retentionDays: 90, bufferMax: 100_000, log: createLogger("silent") });
    await recorder.flush();
    recorder.add(record(1));
    recorder.add(record(2));
    await recorder.flush();
    expect(db.query("SELECT * FROM usage ORDER BY time").all()).toEqual([record(1), record(2)]);
    db.close();
  });
});
