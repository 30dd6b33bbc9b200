import type { Database } from "bun:sqlite";
import { connectPostgres } from "../lib/postgres.ts";
import type { BudgetLedger } from "./ledger.ts";
import { createPostgresLedger } from "./postgres-ledger.ts";
import { KEY_CHECK_MS } from "./lookup.ts";
import { createPostgresKeyStore, KEYS_REFRESH_MS } from "./postgres-store.ts";
import { createSqliteLedger } from "./sqlite-ledger.ts";
import { createSqliteKeyStore, type SqliteKeyStoreOptions } from "./sqlite-store.ts";
import type { KeyStore } from "./store.ts";

export interface Keys {
  store: KeyStore;
  ledger: BudgetLedger;
  /** Resolves once the keys are first read: Postgres's are read in the background, SQLite's at once. */
  loaded(): Promise<void>;
  /**
   * How long after a change's commit every process sharing the store has it, for its next request:
   * the lookup's check of SQLite (KEY_CHECK_MS), else Postgres's refresh and a margin for its read.
   */
  inForceAfterMs: number;
  close(): Promise<void>;
}

/**
 * The key store and the budgets' ledger for a server: in Postgres when DATABASE_URL is set
 * (contract 21), else in parley.db. `open` must return a new SQLite connection on each call;
 * `shared`, when given, is the app's one connection, for the ledger.
 */
export function openKeys(databaseUrl: string | undefined, open: () => Database, options: SqliteKeyStoreOptions = {}, shared?: () => Database): Keys {
  if (!databaseUrl) {
    const store = createSqliteKeyStore(open, options);
    // The ledger on the app's own connection when it is given (the app closes it), else on one of its own.
    let own: Database | undefined;
    const ledger = createSqliteLedger(shared ?? (() => (own ??= open())));
    return {
      store, ledger,
      loaded: async () => {},
      inForceAfterMs: KEY_CHECK_MS + 1,
      async close() {
        store.close();
        own?.close();
      },
    };
  }
  const sql = connectPostgres(databaseUrl);
  const store = createPostgresKeyStore(sql, options);
  return {
    store, ledger: createPostgresLedger(sql),
    loaded: () => store.loaded(),
    inForceAfterMs: KEYS_REFRESH_MS + 100,
    async close() {
      store.close();
      await sql.close();
    },
  };
}
