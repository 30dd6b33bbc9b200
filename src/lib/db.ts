import { Database } from "bun:sqlite";
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";

/** parley's one SQLite database: WAL so every worker process can share it, with a busy timeout. */
export function openDatabase(dataDir: string): Database {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, "parley.db");
  const db = new Database(file, { create: true, strict: true });
  // It holds extracted file text and usage: this user's alone. SQLite gives its WAL files the same mode.
  chmodSync(file, 0o600);
  // The busy timeout first: switching to WAL waits, too, while another process recovers the log.
  db.run("PRAGMA busy_timeout = 5000");
  db.run("PRAGMA journal_mode = WAL");
  // Everything here is a counter or a cache of the object store: speed matters more than surviving a power cut.
  db.run("PRAGMA synchronous = OFF");
  db.run("PRAGMA wal_autocheckpoint = 10000");
  return db;
}
