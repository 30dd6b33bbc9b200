import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { GatewayError } from "../../src/errors.ts";
import { createKeyLookup } from "../../src/keys/lookup.ts";
import { createPostgresLedger } from "../../src/keys/postgres-ledger.ts";
import { createPostgresKeyStore } from "../../src/keys/postgres-store.ts";
import { hashSecret } from "../../src/keys/secret.ts";
import { checkNewKey } from "../../src/keys/validate.ts";
import { connectPostgres } from "../../src/lib/postgres.ts";
import { startPostgres } from "../lib/postgres.ts";

// Keys and budgets in Postgres (contracts 19 and 21). Each "gateway" here is its own connection
// pool with its own store, as separate `parley serve` processes have.
const pg = await startPostgres();
afterAll(() => pg.dispose());

const silent = { warn() {}, info() {}, error() {}, debug() {} } as never;

async function gateways(n: number, database: string) {
  const url = await pg.database(database);
  return Array.from({ length: n }, () => {
    const sql = connectPostgres(url);
    const store = createPostgresKeyStore(sql, { reservedNames: new Map([["main", "API_KEY"]]) });
    return { sql, store, ledger: createPostgresLedger(sql), lookup: createKeyLookup(store, { log: silent }), url };
  });
}

/** Waits until `check` passes; how long it took. */
async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<number> {
  const start = performance.now();
  while (!(await check())) {
    if (performance.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await Bun.sleep(10);
  }
  return performance.now() - start;
}

describe("keys in Postgres, shared by every gateway", () => {
  test("a key created on one gateway is in force on another within a second; revoked there, refused here within a second", async () => {
    const [a, b, c] = await gateways(3, "keys_shared");
    for (const g of [a!, b!, c!]) await g.store.loaded();
    const issued = await a!.store.create(checkNewKey({ name: "teammate", models: ["claude-*"] }), "main");
    // The gateway that made it knows it at once.
    expect(a!.lookup.identify(issued.key)).toMatchObject({ ok: true, key: { id: issued.id, label: "teammate" } });
    for (const other of [b!, c!]) expect(await within(1000, () => other.lookup.identify(issued.key)?.ok === true)).toBeLessThan(1000);
    await c!.store.revoke(issued.id, "main");
    expect(await within(1000, () => b!.lookup.identify(issued.key)?.ok === false)).toBeLessThan(1000);
    expect(b!.lookup.identify(issued.key)).toMatchObject({ ok: false, reason: "revoked" });
    for (const g of [a!, b!, c!]) g.store.close();
  });

  test("a name is unique across gateways; the audit log names who did what, never a secret or its hash", async () => {
    const [a, b] = await gateways(2, "keys_names");
    const issued = await a!.store.create(checkNewKey({ name: "ci" }), "main");
    const taken = await Promise.resolve(b!.store.create(checkNewKey({ name: "ci" }), "ops")).catch((error: GatewayError) => error);
    expect(taken).toMatchObject({ status: 422, details: `name: 'ci' is already the name of key ${issued.id}` });
    expect(await Promise.resolve(b!.store.create(checkNewKey({ name: "main" }), "ops")).catch((e: GatewayError) => e.details)).toBe("name: 'main' is the name of a key set in API_KEY");
    const rotated = await b!.store.rotate(issued.id, 0, "ops");
    expect(rotated.prefix).not.toBe(issued.prefix);
    const updated = await b!.store.update(issued.id, { rpm: 10 }, "ops");
    expect(updated).toMatchObject({ id: issued.id, rpm: 10, name: "ci" });
    const audit = await a!.store.audit();
    expect(audit.map((e) => [e.actor, e.action, e.target])).toEqual([["ops", "key.update", issued.id], ["ops", "key.rotate", issued.id], ["main", "key.create", issued.id]]);
    const text = JSON.stringify(audit);
    for (const secret of [issued.key, rotated.key]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(hashSecret(secret));
    }
    // The old secret stopped at once, on the other gateway too.
    await within(1000, () => a!.lookup.identify(issued.key)?.ok === false);
    expect(a!.lookup.identify(issued.key)).toMatchObject({ ok: false, reason: "rotated" });
    expect(await a!.store.find("ci")).toMatchObject({ id: issued.id, rpm: 10 });
    for (const g of [a!, b!]) g.store.close();
  });

  test("with the database down, the last known keys stay in force; changes made when it is back are seen", async () => {
    const [a, b] = await gateways(2, "keys_outage");
    const first = await a!.store.create(checkNewKey({ name: "first" }), "main");
    await within(1000, () => b!.lookup.identify(first.key)?.ok === true);
    await pg.stop();
    try {
      await Bun.sleep(1200); // refreshes fail meanwhile
      expect(b!.lookup.identify(first.key)).toMatchObject({ ok: true });
      expect(await Promise.resolve(a!.store.create(checkNewKey({ name: "second" }), "main")).then(() => "created", () => "failed")).toBe("failed");
    } finally {
      await pg.start();
    }
    const second = await within(5000, async () => (await Promise.resolve(a!.store.create(checkNewKey({ name: "second" }), "main")).then(() => true, () => false)));
    expect(second).toBeGreaterThanOrEqual(0);
    const made = await a!.store.find("second");
    expect(made).toBeDefined();
    expect(b!.lookup.identify(first.key)).toMatchObject({ ok: true });
    for (const g of [a!, b!]) g.store.close();
  });
});

describe("budgets in Postgres", () => {
  test("three gateways x 20 reservations at once for one key: never past the budget; settled spend is seen by all", async () => {
    const all = await gateways(3, "ledger_race");
    const budget = { usd: 1, period: "day" } as const;
    const results = await Promise.all(all.flatMap((g) => Array.from({ length: 20 }, async () => {
      const held = await g.ledger.reserve("key_race", budget, 0.06);
      if (!held.ok) return 0;
      await g.ledger.settle(held.reservation, 0.06);
      return 1;
    })));
    const admitted = results.reduce((n: number, r) => n + r, 0);
    expect(admitted).toBe(16); // 16 x $0.06 = $0.96; a 17th would pass $1
    for (const g of all) expect(await g.ledger.spend("key_race", budget)).toMatchObject({ used: 0.96, reserved: 0, limit: 1, unit: "usd" });
    const refused = await all[0]!.ledger.reserve("key_race", budget, 0.06);
    expect(refused).toMatchObject({ ok: false, used: 0.96, needed: 0.06, limit: 1 });
    // Settling twice counts once.
    const held = await all[1]!.ledger.reserve("key_other", { tokens: 100, period: "week" }, 10);
    if (!held.ok) throw new Error("refused");
    await all[1]!.ledger.settle(held.reservation, 7);
    await all[1]!.ledger.settle(held.reservation, 7);
    expect(await all[2]!.ledger.spend("key_other", { tokens: 100, period: "week" })).toMatchObject({ used: 7, reserved: 0 });
    const sql = new SQL(all[0]!.url);
    expect(await sql`SELECT version FROM keys_migrations`).toEqual([{ version: 1 }]);
    await sql.close();
  });
});
