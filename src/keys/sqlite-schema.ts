import type { Database } from "bun:sqlite";

/**
 * The keys' tables in parley's database. Restrictions live as one JSON column (`settings`): they are
 * read whole into the lookup's map and never queried one by one, and a field added later needs no
 * migration. A revoked key keeps its row (its name is free again), so a 401 can say it was revoked.
 */
export function createKeyTables(db: Database): void {
  db.transaction(() => {
    db.run(`CREATE TABLE IF NOT EXISTS keys (
      id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, settings TEXT NOT NULL,
      expires_at INTEGER, disabled INTEGER NOT NULL DEFAULT 0, revoked_at INTEGER,
      created_at INTEGER NOT NULL, last_used_at INTEGER) WITHOUT ROWID`);
    db.run("CREATE UNIQUE INDEX IF NOT EXISTS keys_live_name ON keys (name) WHERE revoked_at IS NULL");
    db.run("CREATE TABLE IF NOT EXISTS key_retired_hashes (hash TEXT PRIMARY KEY, key_id TEXT NOT NULL, until INTEGER NOT NULL) WITHOUT ROWID");
    // One row, bumped by every change of a key: the lookup reloads when it moves. The usage records,
    // rate limits and budgets written to the same database move PRAGMA data_version too, but not this.
    db.run("CREATE TABLE IF NOT EXISTS key_changes (one INTEGER PRIMARY KEY CHECK (one = 1), version INTEGER NOT NULL)");
    db.run("INSERT OR IGNORE INTO key_changes (one, version) VALUES (1, 0)");
    db.run(`CREATE TABLE IF NOT EXISTS audit_log (
      id INTEGER PRIMARY KEY, time INTEGER NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL, target TEXT, detail TEXT NOT NULL)`);
    db.run(`CREATE TABLE IF NOT EXISTS key_spend (
      key_id TEXT NOT NULL, period TEXT NOT NULL, unit TEXT NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (key_id, period, unit)) WITHOUT ROWID`);
    db.run(`CREATE TABLE IF NOT EXISTS key_reservations (
      id INTEGER PRIMARY KEY, key_id TEXT NOT NULL, period TEXT NOT NULL, unit TEXT NOT NULL, amount INTEGER NOT NULL, expires INTEGER NOT NULL)`);
    db.run("CREATE INDEX IF NOT EXISTS key_reservations_key ON key_reservations (key_id, period, unit)");
    db.run(`CREATE TABLE IF NOT EXISTS key_tokens (
      key_id TEXT NOT NULL, window INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (key_id, window)) WITHOUT ROWID`);
  }).immediate();
}
