import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/lib/db.ts";
import { createSqliteLedger } from "../../src/keys/sqlite-ledger.ts";
import { createSqliteKeyStore, type SqliteKeyStoreOptions } from "../../src/keys/sqlite-store.ts";
import { checkNewKey } from "../../src/keys/validate.ts";

/** A fresh data dir with a key store and a ledger on parley's database in it. */
export function keysIn(options: SqliteKeyStoreOptions = {}, dataDir = mkdtempSync(join(tmpdir(), "parley-keys-"))) {
  const open = () => openDatabase(dataDir);
  const store = createSqliteKeyStore(open, options);
  const db = open();
  const ledger = createSqliteLedger(() => db);
  return {
    dataDir,
    store,
    ledger,
    db,
    create: (body: Record<string, unknown>) => store.create(checkNewKey(body), "main"),
    [Symbol.dispose]() {
      store.close();
      db.close();
    },
  };
}
