// One process of the overshoot test: `bun spend.ts DIR KEY_ID BUDGET_JSON CONCURRENCY RESERVE OVER` runs CONCURRENCY
// loops that each reserve RESERVE dollars, wait a little (the call), and settle with what the call "cost":
// between half the reservation and OVER times it. A loop stops at its first refusal. Prints what it settled.
import { openDatabase } from "../../../src/lib/db.ts";
import { createSqliteLedger } from "../../../src/keys/sqlite-ledger.ts";
import type { KeyBudget } from "../../../src/keys/types.ts";

const [dataDir, keyId, budgetJson, concurrency, reserve, over] = process.argv.slice(2) as [string, string, string, string, string, string];
const budget = JSON.parse(budgetJson) as KeyBudget;
const db = openDatabase(dataDir);
const ledger = createSqliteLedger(() => db);
let settled = 0;
let admitted = 0;
let maxInFlight = 0;
let inFlight = 0;

async function loop() {
  for (;;) {
    const held = ledger.reserve(keyId, budget, Number(reserve));
    if (!held.ok) return;
    admitted++;
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    await Bun.sleep(Math.random() * 15);
    const cost = Number(reserve) * (0.5 + Math.random() * (Number(over) - 0.5));
    ledger.settle(held.reservation, cost);
    inFlight--;
    settled += Math.round(cost * 1e6);
  }
}

// Every process starts its loops at the same moment, so they contend from the first reservation.
const start = Number(process.env.START_AT ?? 0);
await Bun.sleep(Math.max(0, start - Date.now()));
await Promise.all(Array.from({ length: Number(concurrency) }, loop));
process.stdout.write(JSON.stringify({ settled, admitted, maxInFlight }));
db.close();
