// A second process changing keys in a data dir: `bun change-keys.ts DIR create NAME | revoke ID | update ID JSON`.
// Prints the answer as JSON, so the test reads what it did.
import { openDatabase } from "../../../src/lib/db.ts";
import { createSqliteKeyStore } from "../../../src/keys/sqlite-store.ts";
import { checkChanges, checkNewKey } from "../../../src/keys/validate.ts";

const [dataDir, action, arg, json] = process.argv.slice(2) as [string, string, string, string?];
const store = createSqliteKeyStore(() => openDatabase(dataDir));
const answer =
  action === "create" ? store.create(checkNewKey({ name: arg }), "other-process")
  : action === "revoke" ? store.revoke(arg, "other-process")
  : store.update(arg, checkChanges(JSON.parse(json ?? "{}")), "other-process");
process.stdout.write(JSON.stringify(answer));
store.close();
