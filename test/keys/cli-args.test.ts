import { describe, expect, test } from "bun:test";
import { fieldsFromFlags, parseBudget, parseDuration, parseExpiry } from "../../src/commands/keys-args.ts";
import { keysTable } from "../../src/commands/keys-table.ts";
import { checkChanges } from "../../src/keys/validate.ts";

const NOW = Date.parse("2026-11-27T12:00:00Z");

describe("the flags of parley keys", () => {
  test("budgets, durations and expiry", () => {
    expect(parseBudget("5usd/day")).toEqual({ usd: 5, period: "day" });
    expect(parseBudget("0.5USD / month")).toEqual({ usd: 0.5, period: "month" });
    expect(parseBudget("200000tokens/week")).toEqual({ tokens: 200000, period: "week" });
    for (const bad of ["5eur/day", "5usd/year", "1.5tokens/day", "0usd/day", "usd/day"]) expect(parseBudget(bad)).toBeUndefined();
    expect([parseDuration("45s"), parseDuration("90m"), parseDuration("1h"), parseDuration("30d"), parseDuration("2w"), parseDuration("1y")]).toEqual([45, 5400, 3600, 2_592_000, 1_209_600, undefined]);
    expect(parseExpiry("30d", NOW)).toBe(NOW / 1000 + 2_592_000);
    expect(parseExpiry("2027-01-31", NOW)).toBe(Date.parse("2027-01-31T00:00:00Z") / 1000);
    expect(parseExpiry("2026-01-01", NOW)).toBeUndefined();
    expect(parseExpiry("0d", NOW)).toBeUndefined();
  });

  test("flags become the admin API's fields, which the store's checks accept; update clears with none/all/never", () => {
    const created = fieldsFromFlags({ scopes: "chat, models", models: "claude-*", budget: "5usd/day", rpm: "60", expires: "1d", meta: "team=web,owner=ana" }, false, NOW);
    expect(created).toEqual({ scopes: ["chat", "models"], models: ["claude-*"], budget: { usd: 5, period: "day" }, rpm: 60, expires_at: NOW / 1000 + 86_400, metadata: { team: "web", owner: "ana" } });
    expect(checkChanges(created)).toEqual(created as never);
    const cleared = fieldsFromFlags({ budget: "none", models: "all", expires: "never", meta: "none", tpm: "none" }, true, NOW);
    expect(cleared).toEqual({ budget: null, models: null, expires_at: null, metadata: {}, tpm: null });
    expect(checkChanges(cleared)).toEqual(cleared as never);
  });

  test("the list's table", () => {
    expect(keysTable([])).toBe("No keys yet: parley keys create NAME makes one.\n");
    const table = keysTable([
      { id: "key_AAAAAAAAAAAAAAAA", source: "runtime", name: "ci", prefix: "pk-abcdefg", scopes: ["chat"], models: null, budget: { tokens: 200000, period: "week" },
        spend: { unit: "tokens", used: 1500, reserved: 4096, limit: 200000 }, expires_at: NOW / 1000 - 1, last_used_at: NOW / 1000 },
    ], NOW);
    expect(table.split("\n")[1]).toBe("ci    key_AAAAAAAAAAAAAAAA  pk-abcdefg  chat    all     200,000 tokens/week  1,500 (+4,096 held)  2026-11-27 11:59  2026-11-27 12:00  expired");
  });
});
