import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { Config } from "../../src/config.ts";
import type { UsageRecord } from "../../src/usage/recorder.ts";

/**
 * The usage rows a gateway wrote, read straight from its SQLite file. `flush` is a call to
 * GET /v1/usage, which writes what is queued first.
 */
export async function recordsOf(config: Config, flush: () => Promise<Response>): Promise<UsageRecord[]> {
  expect((await flush()).status).toBe(200);
  const db = new Database(join(config.dataDir, "parley.db"), { readonly: true });
  try {
    return db.query<UsageRecord, []>("SELECT * FROM usage ORDER BY rowid").all();
  } finally {
    db.close();
  }
}

/** Waits until `check` passes (the shared budget counts are written and read once a second). */
export async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition never became true");
    await Bun.sleep(50);
  }
}

import { expect } from "bun:test";
