import { Database } from "bun:sqlite";
import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { loadConfig } from "../config.ts";
import { connectPostgres } from "../lib/postgres.ts";
import { createLogger } from "../log.ts";
import { createPostgresUsageStore } from "../usage/postgres-store.ts";
import type { UsageRecord } from "../usage/recorder.ts";
import { exitOnConfigError, exitUsage } from "./fail.ts";

const PAGE = 5000;

export default defineCommand({
  meta: { name: "import", description: "Copy a SQLite database's usage records (a parley.db) into DATABASE_URL's Postgres; records already there count once" },
  args: { file: { type: "positional", required: true, description: "the parley.db to read" } },
  run: ({ args }) =>
    exitOnConfigError(async () => {
      const { config } = loadConfig();
      if (!config.databaseUrl) exitUsage("usage import copies into Postgres: set DATABASE_URL");
      if (!existsSync(args.file)) exitUsage(`${args.file}: no such file`);
      const source = new Database(args.file, { readonly: true, strict: true });
      const has = source.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'usage'").get();
      if (!has) exitUsage(`${args.file} has no usage records (no usage table)`);
      const store = createPostgresUsageStore(connectPostgres(config.databaseUrl), createLogger("warn"));
      let read = 0;
      let added = 0;
      try {
        const page = source.query<Row, [number]>(`SELECT rowid AS rowid_, * FROM usage WHERE rowid > ? ORDER BY rowid LIMIT ${PAGE}`);
        for (let after = 0; ;) {
          const rows = page.all(after);
          if (rows.length === 0) break;
          added += await store.write(rows.map(recordOf));
          read += rows.length;
          after = rows.at(-1)!.rowid_;
        }
      } finally {
        source.close();
        await store.close();
      }
      process.stdout.write(`Imported ${added} usage records from ${args.file}${read > added ? ` (${read - added} were there already)` : ""}.\n`);
    }),
});

/** Columns a parley.db gained over time may be missing from an older one. */
type Row = Partial<UsageRecord> & Omit<UsageRecord, "id" | "request_id" | "route" | "session"> & { rowid_: number };

/**
 * A record as the file holds it. Records an older parley wrote have no id: theirs is made from the
 * row itself, so that importing the same file twice counts each record once.
 */
function recordOf({ rowid_, ...row }: Row): UsageRecord {
  const id = row.id ?? `import-${new Bun.CryptoHasher("sha256").update(JSON.stringify([rowid_, row])).digest("hex").slice(0, 32)}`;
  return { ...row, id, request_id: row.request_id ?? null, route: row.route ?? null, session: row.session ?? null };
}
