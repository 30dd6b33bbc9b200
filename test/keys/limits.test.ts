import { describe, expect, test } from "bun:test";
import { createKeyRpm, createKeyTpm } from "../../src/keys/limits.ts";
import { activeKey } from "../../src/keys/lookup.ts";
import { createRateLimiter } from "../../src/server/rate-limit.ts";
import { withinOneWindow } from "../lib/redis.ts";
import { keysIn } from "./lib.ts";

describe("a key's own rpm and tpm", () => {
  test("rpm replaces RATE_LIMIT_RPM for that key, counted in the server's limiter", async () => {
    using keys = keysIn();
    const rpm = createKeyRpm((n) => createRateLimiter(() => keys.db, n));
    const limited = activeKey(keys.create({ name: "slow", rpm: 3 }));
    const free = activeKey(keys.create({ name: "free" }));
    expect(rpm(free)).toBeUndefined();
    await withinOneWindow(10);
    const decisions = Array.from({ length: 4 }, () => rpm(limited)!);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions[0]).toMatchObject({ limit: 3 });
    // Another process's limiter (another worker) shares the count.
    const other = createKeyRpm((n) => createRateLimiter(() => keys.db, n));
    expect(other(limited)!.allowed).toBe(false);
  });

  test("tpm lets requests in while the minute's tokens are under it, across workers", async () => {
    using keys = keysIn();
    const tpm = createKeyTpm(() => keys.db);
    const key = activeKey(keys.create({ name: "tokens", tpm: 1000 }));
    expect(tpm.check(activeKey(keys.create({ name: "none" })))).toBeUndefined();
    await withinOneWindow(10);
    expect(tpm.check(key)).toMatchObject({ allowed: true, used: 0, limit: 1000 });
    tpm.add(key, 600);
    expect(tpm.check(key)).toMatchObject({ allowed: true, used: 600 });
    createKeyTpm(() => keys.db).add(key, 400);
    const over = tpm.check(key)!;
    expect(over).toMatchObject({ allowed: false, used: 1000 });
    expect(over.reset % 60).toBe(0);
    expect(tpm.check(key, Date.now() + 60_000)).toMatchObject({ allowed: true, used: 0 });
  });
});
