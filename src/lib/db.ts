import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

/** parley's one SQLite database: WAL so every worker process can share it, with a busy timeout. */
export function openDatabase(dataDir: string): Database {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, "parley.db"), { create: true, strict: true });
  // The busy timeout first: switching to WAL waits, too, while another process recovers the log.
  db.run("PRAGMA busy_timeout = 5000");
  db.run("PRAGMA journal_mode = WAL");
  // Everything here is a counter or a cache of the object store: speed matters more than surviving a power cut.
  db.run("PRAGMA synchronous = OFF");
  db.run("PRAGMA wal_autocheckpoint = 10000");
  return db;
}
