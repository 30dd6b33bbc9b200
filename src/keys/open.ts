import type { Database } from "bun:sqlite";
import { connectPostgres } from "../lib/postgres.ts";
import type { BudgetLedger } from "./ledger.ts";
import { createPostgresLedger } from "./postgres-ledger.ts";
import { createPostgresKeyStore } from "./postgres-store.ts";
import { createSqliteLedger } from "./sqlite-ledger.ts";
import { createSqliteKeyStore, type SqliteKeyStoreOptions } from "./sqlite-store.ts";
import type { KeyStore } from "./store.ts";

export interface Keys {
  store: KeyStore;
  ledger: BudgetLedger;
  /** Resolves once the keys are first read: Postgres's are read in the background, SQLite's at once. */
  loaded(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The key store and the budgets' ledger for a server: in Postgres when DATABASE_URL is set
 * (contract 21), else in parley.db. `open` must return a new SQLite connection on each call.
 */
export function openKeys(databaseUrl: string | undefined, open: () => Database, options: SqliteKeyStoreOptions = {}): Keys {
  if (!databaseUrl) {
    const store = createSqliteKeyStore(open, options);
    let db: Database | undefined;
    const ledger = createSqliteLedger(() => (db ??= open()));
    return {
      store, ledger,
      loaded: async () => {},
      async close() {
        store.close();
        db?.close();
      },
    };
  }
  const sql = connectPostgres(databaseUrl);
  const store = createPostgresKeyStore(sql, options);
  return {
    store, ledger: createPostgresLedger(sql),
    loaded: () => store.loaded(),
    async close() {
      store.close();
      await sql.close();
    },
  };
}
