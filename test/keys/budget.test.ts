import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { charge, DEFAULT_MAX_OUTPUT, reservationCharge } from "../../src/keys/charge.ts";
import { withSpend } from "../../src/keys/ledger.ts";
import { periodAt } from "../../src/keys/period.ts";
import { createSqliteLedger } from "../../src/keys/sqlite-ledger.ts";
import type { KeyBudget } from "../../src/keys/types.ts";
import type { Price } from "../../src/usage/prices.ts";
import { keysIn } from "./lib.ts";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe("budget periods, in UTC", () => {
  test("a day ends at 00:00 UTC", () => {
    const span = periodAt("day", at("2026-11-27T23:59:59.999Z"));
    expect([span.id, iso(span.start), iso(span.end)]).toEqual(["day:2026-11-27", "2026-11-27T00:00:00.000Z", "2026-11-28T00:00:00.000Z"]);
    expect(periodAt("day", at("2026-11-28T00:00:00.000Z")).id).toBe("day:2026-11-28");
  });

  test("an ISO week runs from Monday 00:00 UTC, across a year's end too", () => {
    expect(periodAt("week", at("2026-11-29T23:59:59.999Z")).id).toBe("week:2026-11-23"); // a Sunday
    const monday = periodAt("week", at("2026-11-30T00:00:00.000Z"));
    expect([monday.id, iso(monday.end)]).toEqual(["week:2026-11-30", "2026-12-07T00:00:00.000Z"]);
    expect(periodAt("week", at("2026-11-30T12:00:00.000Z")).id).toBe("week:2026-11-30");
    const newYear = periodAt("week", at("2027-01-01T08:00:00.000Z")); // a Friday
    expect([newYear.id, iso(newYear.start), iso(newYear.end)]).toEqual(["week:2026-12-28", "2026-12-28T00:00:00.000Z", "2027-01-04T00:00:00.000Z"]);
  });

  test("a month is the calendar month", () => {
    const december = periodAt("month", at("2026-12-31T23:59:59.999Z"));
    expect([december.id, iso(december.start), iso(december.end)]).toEqual(["month:2026-12", "2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"]);
    expect(periodAt("month", at("2027-01-01T00:00:00.000Z")).id).toBe("month:2027-01");
    expect(iso(periodAt("month", at("2028-02-29T12:00:00.000Z")).end)).toBe("2028-03-01T00:00:00.000Z");
  });

  test("spend starts again with the next period; a request settles in the period it reserved in", () => {
    using keys = keysIn();
    const budget: KeyBudget = { tokens: 1000, period: "day" };
    const lateNight = at("2026-11-27T23:59:00.000Z");
    const first = keys.ledger.reserve("key_a", budget, 600, lateNight);
    if (!first.ok) throw new Error("expected room");
    const refused = keys.ledger.reserve("key_a", budget, 600, lateNight);
    expect(refused).toEqual({ ok: false, unit: "tokens", period: "day", limit: 1000, used: 0, reserved: 600, needed: 600, resets_at: at("2026-11-28T00:00:00Z") / 1000 });
    const nextDay = at("2026-11-28T00:00:01.000Z");
    expect(keys.ledger.reserve("key_a", budget, 600, nextDay).ok).toBe(true);
    keys.ledger.settle(first.reservation, 700);
    expect(keys.ledger.spend("key_a", budget, lateNight)).toMatchObject({ used: 700, reserved: 0, limit: 1000 });
    expect(keys.ledger.spend("key_a", budget, nextDay)).toMatchObject({ used: 0, reserved: 600 });
  });
});

describe("reservations", () => {
  test("settle replaces the reservation by the real cost, once", () => {
    using keys = keysIn();
    const budget: KeyBudget = { usd: 1, period: "month" };
    const held = keys.ledger.reserve("key_b", budget, 0.4);
    if (!held.ok) throw new Error("expected room");
    expect(keys.ledger.spend("key_b", budget)).toMatchObject({ unit: "usd", used: 0, reserved: 0.4 });
    keys.ledger.settle(held.reservation, 0.123456);
    keys.ledger.settle(held.reservation, 0.123456);
    expect(keys.ledger.spend("key_b", budget)).toMatchObject({ used: 0.123456, reserved: 0 });
    // Exactly up to the budget is allowed; a micro-dollar more is not.
    expect(keys.ledger.reserve("key_b", budget, 0.876544).ok).toBe(true);
    expect(keys.ledger.reserve("key_b", budget, 0.000001).ok).toBe(false);
  });

  test("a crashed request's reservation expires after the TTL", () => {
    using keys = keysIn();
    const ledger = createSqliteLedger(() => keys.db, 60_000);
    const budget: KeyBudget = { tokens: 100, period: "day" };
    const now = at("2026-11-27T12:00:00Z");
    expect(ledger.reserve("key_c", budget, 100, now).ok).toBe(true);
    expect(ledger.reserve("key_c", budget, 1, now + 59_000).ok).toBe(false);
    expect(ledger.reserve("key_c", budget, 100, now + 60_001).ok).toBe(true);
  });

  test("a record read with its budget carries its spend", async () => {
    using keys = keysIn();
    const key = keys.create({ name: "spender", budget: { usd: 5, period: "week" } });
    const held = keys.ledger.reserve(key.id, key.budget!, 1);
    if (held.ok) keys.ledger.settle(held.reservation, 0.25);
    expect((await withSpend(key, keys.ledger)).spend).toMatchObject({ unit: "usd", period: "week", used: 0.25, reserved: 0, limit: 5 });
    const plain = keys.create({ name: "plain" });
    expect((await withSpend(plain, keys.ledger)).spend).toBeUndefined();
  });

  test("what a request reserves and what it settles", () => {
    const prices = new Map<string, Price>([["claude-x", { input: 3, output: 15 }]]);
    const pricing = { priceOf: (m: string) => prices.get(m), maxOutputOf: (m: string) => (m === "claude-x" ? 64_000 : undefined) };
    const usd: KeyBudget = { usd: 5, period: "day" };
    const tokens: KeyBudget = { tokens: 100_000, period: "day" };
    expect(reservationCharge(usd, "claude-x", 1000, 500, pricing)).toEqual({ amount: (1000 * 3 + 500 * 15) / 1e6, unpriced: false });
    expect(reservationCharge(usd, "claude-x", 1000, undefined, pricing).amount).toBeCloseTo((1000 * 3 + 64_000 * 15) / 1e6, 9);
    expect(reservationCharge(tokens, "other", 1000, undefined, pricing)).toEqual({ amount: 1000 + DEFAULT_MAX_OUTPUT, unpriced: false });
    expect(reservationCharge(usd, "unpriced", 1000, 100, pricing)).toEqual({ amount: 0, unpriced: true });
    const billed = { input: 100, output: 50, cacheRead: 1000, cacheWrite: 10 };
    expect(charge(tokens, "claude-x", billed, pricing.priceOf).amount).toBe(1160);
    expect(charge(usd, "claude-x", billed, pricing.priceOf).amount).toBeCloseTo((100 * 3 + 50 * 15 + 1000 * 3 + 10 * 3) / 1e6, 12);
  });
});

describe("the overshoot bound, with several processes reserving at once", () => {
  const HELPER = join(import.meta.dir, "helpers/spend.ts");
  const BUDGET = { usd: 1, period: "day" } as const;
  const RESERVE = 0.02;

  async function race(dataDir: string, keyId: string, over: number) {
    const startAt = String(Date.now() + 1500);
    const procs = Array.from({ length: 3 }, () =>
      Bun.spawn(["bun", "--no-env-file", HELPER, dataDir, keyId, JSON.stringify(BUDGET), "20", String(RESERVE), String(over)], {
        stdout: "pipe", stderr: "pipe", env: { ...process.env, START_AT: startAt },
      }));
    const results = await Promise.all(procs.map(async (proc) => {
      const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      if (code !== 0) throw new Error(`spend.ts failed: ${err}`);
      return JSON.parse(out) as { settled: number; admitted: number; maxInFlight: number };
    }));
    return { settled: results.reduce((sum, r) => sum + r.settled, 0) / 1e6, admitted: results.reduce((sum, r) => sum + r.admitted, 0), results };
  }

  test("3 processes x 20 concurrent requests that cost at most what they reserved: never over $1", async () => {
    using keys = keysIn();
    const { settled, admitted, results } = await race(keys.dataDir, "key_race1", 1);
    expect(results.some((r) => r.maxInFlight > 1)).toBe(true);
    // At least the budget's worth of reservations went through, and none beyond it settled.
    expect(admitted).toBeGreaterThanOrEqual(1 / RESERVE);
    expect(settled).toBeLessThanOrEqual(1 + 1e-6);
    expect(keys.ledger.spend("key_race1", BUDGET).used).toBeCloseTo(settled, 5);
    expect(keys.ledger.spend("key_race1", BUDGET).reserved).toBe(0);
  });

  test("requests that cost up to 1.5x their reservation overshoot by at most what was in flight", async () => {
    using keys = keysIn();
    const { settled } = await race(keys.dataDir, "key_race2", 1.5);
    // Each of the at most 60 requests in flight when the budget filled can exceed its reservation by half of it.
    const inFlightBound = 60 * RESERVE * 0.5;
    expect(settled).toBeGreaterThan(0.5);
    expect(settled).toBeLessThanOrEqual(1 + inFlightBound + 1e-6);
  });
});
