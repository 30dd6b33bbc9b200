import type { SQL } from "bun";
import { fromLedger, limitOf, toLedger, unitOf, type BudgetLedger, type Reservation, type Reserved } from "./ledger.ts";
import { periodAt } from "./period.ts";
import { migrateKeys } from "./postgres-schema.ts";
import { RESERVATION_TTL_MS } from "./sqlite-ledger.ts";
import type { Spend } from "./types.ts";

interface At {
  key_id: string;
  period: string;
  unit: string;
}

/**
 * Budgets in Postgres (DATABASE_URL), shared by every gateway. A reservation is one transaction
 * that locks the key's spend row for the period (made first if need be) before it checks and holds:
 * gateways reserving for one key take turns, so spent + reserved never passes the budget, as with
 * SQLite's write lock; different keys never wait for each other.
 */
export function createPostgresLedger(sql: SQL, ttlMs = RESERVATION_TTL_MS): BudgetLedger {
  const settled = new WeakSet<Reservation>();

  async function totals(tx: SQL, at: At, now: number, lock: boolean) {
    await tx`DELETE FROM key_reservations WHERE key_id = ${at.key_id} AND expires < ${now}`;
    if (lock) {
      await tx`INSERT INTO key_spend (key_id, period, unit, used) VALUES (${at.key_id}, ${at.period}, ${at.unit}, 0) ON CONFLICT DO NOTHING`;
      await tx`SELECT 1 FROM key_spend WHERE key_id = ${at.key_id} AND period = ${at.period} AND unit = ${at.unit} FOR UPDATE`;
    }
    const [row] = await tx`SELECT
      COALESCE((SELECT used FROM key_spend WHERE key_id = ${at.key_id} AND period = ${at.period} AND unit = ${at.unit}), 0)::float8 AS used,
      COALESCE((SELECT SUM(amount) FROM key_reservations WHERE key_id = ${at.key_id} AND period = ${at.period} AND unit = ${at.unit}), 0)::float8 AS reserved`;
    return row as { used: number; reserved: number };
  }

  return {
    async reserve(keyId, budget, amount, now = Date.now()): Promise<Reserved> {
      await migrateKeys(sql);
      const unit = unitOf(budget);
      const span = periodAt(budget.period, now);
      const needed = toLedger(unit, amount);
      const limit = toLedger(unit, limitOf(budget), Math.floor);
      const at = { key_id: keyId, period: span.id, unit };
      const result = await sql.begin(async (tx) => {
        const { used, reserved } = await totals(tx, at, now, true);
        if (used + reserved + needed > limit) return { used, reserved, id: undefined };
        const [held] = await tx`INSERT INTO key_reservations (key_id, period, unit, amount, expires)
          VALUES (${keyId}, ${span.id}, ${unit}, ${needed}, ${now + ttlMs}) RETURNING id`;
        return { used, reserved, id: Number(held.id) };
      });
      if (result.id !== undefined) return { ok: true, reservation: { id: result.id, keyId, period: span.id, unit, amount: needed } };
      return {
        ok: false, unit, period: budget.period, limit: limitOf(budget), used: fromLedger(unit, result.used),
        reserved: fromLedger(unit, result.reserved), needed: fromLedger(unit, needed), resets_at: Math.floor(span.end / 1000),
      };
    },

    async settle(reservation, actual) {
      await migrateKeys(sql);
      const n = toLedger(reservation.unit, Math.max(0, actual), Math.round);
      await sql.begin(async (tx) => {
        // A reservation already gone (settled before, or expired) still adds what the call cost, once.
        const held = await tx`DELETE FROM key_reservations WHERE id = ${reservation.id} RETURNING id`;
        if (held.length === 0 && settled.has(reservation)) return;
        settled.add(reservation);
        if (n > 0) {
          await tx`INSERT INTO key_spend (key_id, period, unit, used) VALUES (${reservation.keyId}, ${reservation.period}, ${reservation.unit}, ${n})
            ON CONFLICT (key_id, period, unit) DO UPDATE SET used = key_spend.used + excluded.used`;
        }
      });
    },

    async spend(keyId, budget, now = Date.now()): Promise<Spend> {
      await migrateKeys(sql);
      const unit = unitOf(budget);
      const span = periodAt(budget.period, now);
      const { used, reserved } = await sql.begin((tx) => totals(tx, { key_id: keyId, period: span.id, unit }, now, false));
      return {
        unit, period: budget.period, used: fromLedger(unit, used), reserved: fromLedger(unit, reserved),
        limit: limitOf(budget), resets_at: Math.floor(span.end / 1000),
      };
    },
  };
}
