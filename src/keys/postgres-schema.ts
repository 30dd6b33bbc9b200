import type { SQL } from "bun";
import { migratePostgres } from "../lib/postgres.ts";

/**
 * The keys' tables in Postgres (sqlite-schema.ts's, typed for Postgres; times in Unix ms), as
 * numbered migrations under the advisory lock every parley migrates under.
 */
const MIGRATIONS = [
  [
    `CREATE TABLE keys (
      id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, settings TEXT NOT NULL,
      expires_at BIGINT, disabled SMALLINT NOT NULL DEFAULT 0, revoked_at BIGINT, created_at BIGINT NOT NULL, last_used_at BIGINT)`,
    "CREATE UNIQUE INDEX keys_live_name ON keys (name) WHERE revoked_at IS NULL",
    "CREATE TABLE key_retired_hashes (hash TEXT PRIMARY KEY, key_id TEXT NOT NULL, until BIGINT NOT NULL)",
    "CREATE TABLE key_changes (one INTEGER PRIMARY KEY CHECK (one = 1), version BIGINT NOT NULL)",
    "INSERT INTO key_changes (one, version) VALUES (1, 0)",
    `CREATE TABLE audit_log (
      id BIGSERIAL PRIMARY KEY, time BIGINT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL, target TEXT, detail TEXT NOT NULL)`,
    `CREATE TABLE key_spend (
      key_id TEXT NOT NULL, period TEXT NOT NULL, unit TEXT NOT NULL, used BIGINT NOT NULL, PRIMARY KEY (key_id, period, unit))`,
    `CREATE TABLE key_reservations (
      id BIGSERIAL PRIMARY KEY, key_id TEXT NOT NULL, period TEXT NOT NULL, unit TEXT NOT NULL, amount BIGINT NOT NULL, expires BIGINT NOT NULL)`,
    "CREATE INDEX key_reservations_key ON key_reservations (key_id, period, unit)",
  ],
];

const migrated = new WeakMap<SQL, Promise<void>>();

/** Creates or migrates the keys' tables once per connection pool (a failed try is tried again at the next call). */
export function migrateKeys(sql: SQL): Promise<void> {
  let done = migrated.get(sql);
  if (!done) {
    done = migratePostgres(sql, "keys_migrations", MIGRATIONS).then(() => {}, (error) => {
      migrated.delete(sql);
      throw error;
    });
    migrated.set(sql, done);
  }
  return done;
}
