import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp } from "../lib/app.ts";
import { runCli, userDir } from "../lib/cli.ts";
import { startPostgres } from "../lib/postgres.ts";

const pg = await startPostgres();
afterAll(() => pg.dispose());

const HOUR_MS = 3_600_000;
const now = Date.now();

/** A parley.db as parley wrote it before this release: no route, no ids, no rollups, no migrations table. */
function oldDatabase(rows: number): string {
  const dataDir = join(mkdtempSync(join(tmpdir(), "parley-old-")), "data");
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, "parley.db"), { create: true });
  db.run(`CREATE TABLE usage (
    time INTEGER NOT NULL, endpoint TEXT NOT NULL, key_label TEXT NOT NULL, model_requested TEXT, model TEXT, provider TEXT,
    input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER, cost_usd REAL,
    status INTEGER NOT NULL, outcome TEXT NOT NULL, latency_ms INTEGER NOT NULL, ttft_ms INTEGER, attempts INTEGER NOT NULL, tag TEXT)`);
  db.run("CREATE INDEX usage_time ON usage (time)");
  const insert = db.query("INSERT INTO usage VALUES (?, '/v1/messages', 'main', 'claude-x', 'claude-x', 'beta', 10, 5, 0, 0, 0.001, 200, 'ok', 30, NULL, 1, NULL)");
  for (let i = 0; i < rows; i++) insert.run(now - (i % 5) * HOUR_MS - 1000 * i);
  db.close();
  return dataDir;
}

describe("an existing SQLite database, and its records into Postgres", () => {
  test("a parley.db from before is migrated in place: its records count, its rollups are filled, new records join them", async () => {
    const dataDir = oldDatabase(50);
    const gateway = testApp({ PARLEY_DATA_DIR: dataDir });
    const before = await (await gateway.call("/v1/usage?since=1d&by=model")).json();
    expect(before.data).toEqual([{ group: "claude-x", requests: 50, input_tokens: 500, output_tokens: 250, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.05 }]);
    const answered = await gateway.json("/v1/chat/completions", { model: "mock", messages: [{ role: "user", content: "hi" }] }, { headers: { "x-request-id": "client-chosen-1" } });
    expect(answered.status).toBe(200);
    const after = await (await gateway.call("/v1/usage?since=1d&by=model")).json();
    expect(after.data.map((row: { group: string; requests: number }) => [row.group, row.requests])).toEqual([["claude-x", 50], ["mock", 1]]);
    const byDay = await (await gateway.call("/v1/usage?since=1d&by=model&bucket=hour")).json();
    expect(byDay).toMatchObject({ object: "list", by: "model", bucket: "hour" });
    expect(byDay.data.reduce((n: number, row: { requests: number }) => n + row.requests, 0)).toBe(51);
    expect(byDay.data.every((row: { start: number }) => row.start % 3600 === 0)).toBe(true);
    const wrong = await gateway.call("/v1/usage?bucket=week");
    expect(wrong.status).toBe(422);
    expect((await wrong.json()).error).toMatchObject({ type: "validation_error", details: expect.stringContaining("bucket") });
    const db = new Database(join(dataDir, "parley.db"), { readonly: true });
    expect(db.query("SELECT version FROM usage_migrations ORDER BY version").all()).toEqual([{ version: 1 }, { version: 2 }]);
    expect(db.query("SELECT SUM(requests) AS n FROM usage_hourly").get()).toEqual({ n: 51 });
    // The client's X-Request-Id is recorded beside parley's own id, never used as the key.
    const [row] = db.query<{ id: string; request_id: string }, []>("SELECT id, request_id FROM usage WHERE id IS NOT NULL").all();
    expect(row).toEqual({ id: expect.stringMatching(/^[0-9a-f]{16}[0-9a-z]+$/), request_id: "client-chosen-1" });
    db.close();
  });

  test("`parley usage import FILE` copies the records into DATABASE_URL's Postgres; a second import adds nothing", async () => {
    const dataDir = oldDatabase(30);
    const url = await pg.database("imported");
    const user = userDir();
    const env = { ...user.env, DATABASE_URL: url };
    const first = await runCli(["usage", "import", join(dataDir, "parley.db")], { env });
    expect(first).toMatchObject({ code: 0, stdout: `Imported 30 usage records from ${join(dataDir, "parley.db")}.\n` });
    const again = await runCli(["usage", "import", join(dataDir, "parley.db")], { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`Imported 0 usage records from ${join(dataDir, "parley.db")} (30 were there already).\n`);
    const report = await runCli(["usage", "--json", "--since", "1d"], { env });
    expect(JSON.parse(report.stdout).data).toEqual([{ group: "claude-x", requests: 30, input_tokens: 300, output_tokens: 150, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.03 }]);
    const sql = new SQL(url);
    expect(await sql`SELECT SUM(requests)::int AS n FROM usage_hourly`).toEqual([{ n: 30 }]);
    await sql.close();
  });

  test("import without DATABASE_URL, or of a file that is not there, says so with exit code 2; a database that does not answer, with 1", async () => {
    const user = userDir();
    const missing = await runCli(["usage", "import", "/nonexistent/parley.db"], { env: { ...user.env, DATABASE_URL: "postgres://127.0.0.1:1/x" } });
    expect(missing).toMatchObject({ code: 2, stderr: "parley: /nonexistent/parley.db: no such file\n" });
    const unset = await runCli(["usage", "import", "/nonexistent/parley.db"], { env: user.env });
    expect(unset).toMatchObject({ code: 2, stderr: "parley: usage import copies into Postgres: set DATABASE_URL\n" });
    const down = await runCli(["usage"], { env: { ...user.env, DATABASE_URL: "postgres://127.0.0.1:1/x" } });
    expect(down.code).toBe(1);
    expect(down.stderr).toStartWith("parley: the usage database cannot be read: ");
  });
});
