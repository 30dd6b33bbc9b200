import type { Database } from "bun:sqlite";
import { fromLedger, limitOf, toLedger, unitOf, type BudgetLedger, type Reservation, type Reserved } from "./ledger.ts";
import { periodAt } from "./period.ts";
import { createKeyTables } from "./sqlite-schema.ts";
import type { Sync } from "./store.ts";
import type { Spend } from "./types.ts";

/** A reservation not settled by then belonged to a request whose process died: it stops holding budget. */
export const RESERVATION_TTL_MS = 15 * 60_000;

/**
 * Budgets in parley's SQLite database. A reservation is one `BEGIN IMMEDIATE` transaction (the
 * database's write lock, held for three statements): every worker process checks and reserves in
 * turn, so spent + reserved never passes the budget. Overshoot comes only from a request that costs
 * more than it reserved (an input estimate under the real count), or that outlives the TTL.
 */
export function createSqliteLedger(database: () => Database, ttlMs = RESERVATION_TTL_MS): Sync<BudgetLedger> {
  let statements: ReturnType<typeof prepare> | undefined;
  const s = () => (statements ??= prepare(database()));

  function prepare(db: Database) {
    createKeyTables(db);
    const totals = db.query<{ used: number; reserved: number }, { key_id: string; period: string; unit: string }>(`SELECT
      coalesce((SELECT used FROM key_spend WHERE key_id = $key_id AND period = $period AND unit = $unit), 0) AS used,
      coalesce((SELECT sum(amount) FROM key_reservations WHERE key_id = $key_id AND period = $period AND unit = $unit), 0) AS reserved`);
    const expire = db.query("DELETE FROM key_reservations WHERE key_id = $key_id AND expires < $now");
    const hold = db.query<{ id: number }, Record<string, string | number>>(
      "INSERT INTO key_reservations (key_id, period, unit, amount, expires) VALUES ($key_id, $period, $unit, $amount, $expires) RETURNING id",
    );
    const release = db.query<{ id: number }, { id: number }>("DELETE FROM key_reservations WHERE id = $id RETURNING id");
    const add = db.query(`INSERT INTO key_spend (key_id, period, unit, used) VALUES ($key_id, $period, $unit, $n)
      ON CONFLICT (key_id, period, unit) DO UPDATE SET used = used + $n`);
    return {
      reserve: db.transaction((at: { key_id: string; period: string; unit: string }, amount: number, limit: number, now: number) => {
        expire.run({ key_id: at.key_id, now });
        const { used, reserved } = totals.get(at)!;
        if (used + reserved + amount > limit) return { used, reserved };
        return { id: hold.get({ ...at, amount, expires: now + ttlMs })!.id };
      }),
      settle: db.transaction((reservation: Reservation, n: number) => {
        // A reservation already gone (settled before, or expired) still adds what the call cost, once.
        const held = release.get({ id: reservation.id });
        if (!held && settled.has(reservation)) return;
        settled.add(reservation);
        if (n > 0) add.run({ key_id: reservation.keyId, period: reservation.period, unit: reservation.unit, n });
      }),
      spend: db.transaction((at: { key_id: string; period: string; unit: string }, now: number) => {
        expire.run({ key_id: at.key_id, now });
        return totals.get(at)!;
      }),
    };
  }

  const settled = new WeakSet<Reservation>();

  return {
    reserve(keyId, budget, amount, now = Date.now()): Reserved {
      const unit = unitOf(budget);
      const span = periodAt(budget.period, now);
      const needed = toLedger(unit, amount);
      const limit = toLedger(unit, limitOf(budget), Math.floor);
      const at = { key_id: keyId, period: span.id, unit };
      const result = s().reserve.immediate(at, needed, limit, now);
      if (result.id !== undefined) return { ok: true, reservation: { id: result.id, keyId, period: span.id, unit, amount: needed } };
      return {
        ok: false, unit, period: budget.period, limit: limitOf(budget), used: fromLedger(unit, result.used),
        reserved: fromLedger(unit, result.reserved), needed: fromLedger(unit, needed), resets_at: Math.floor(span.end / 1000),
      };
    },

    settle(reservation, actual) {
      s().settle.immediate(reservation, toLedger(reservation.unit, Math.max(0, actual), Math.round));
    },

    spend(keyId, budget, now = Date.now()): Spend {
      const unit = unitOf(budget);
      const span = periodAt(budget.period, now);
      const { used, reserved } = s().spend.immediate({ key_id: keyId, period: span.id, unit }, now);
      return {
        unit, period: budget.period, used: fromLedger(unit, used), reserved: fromLedger(unit, reserved),
        limit: limitOf(budget), resets_at: Math.floor(span.end / 1000),
      };
    },
  };
}
