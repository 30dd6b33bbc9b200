import { describe, expect, test } from "bun:test";
import { createBudgetGate } from "../../src/keys/budget-gate.ts";
import { activeKey } from "../../src/keys/lookup.ts";
import { forbidden, mayReach } from "../../src/keys/permits.ts";
import { FREE, type Price } from "../../src/usage/prices.ts";
import { keysIn } from "./lib.ts";

const PRICES = new Map<string, Price>([["claude-x", { input: 3, output: 15 }], ["cheap", { input: 0.1, output: 0.4 }]]);
const pricing = { priceOf: (m: string) => PRICES.get(m) };
const NOON = Date.parse("2026-11-27T12:00:00Z");

describe("what a key may call", () => {
  test("scope, model, route and upstream, each named", () => {
    using keys = keysIn();
    const key = activeKey(keys.create({ name: "narrow", scopes: ["chat"], models: ["claude-*"], routes: ["fast"], upstreams: ["bedrock"] }));
    expect(forbidden(key, { scope: "chat", model: "claude-x", route: "fast", upstream: "bedrock" })).toBeUndefined();
    expect(forbidden(key, { scope: "files:write" })).toEqual({ what: "scope", message: "This key lacks the 'files:write' scope needed here." });
    expect(forbidden(key, { scope: "chat", model: "gpt-4o" })).toEqual({ what: "model", message: "Key 'narrow' may not call model 'gpt-4o'." });
    expect(forbidden(key, { route: "slow" })?.what).toBe("route");
    expect(forbidden(key, { route: null })).toBeUndefined();
    expect(forbidden(key, { upstream: "openai" })?.what).toBe("upstream");
    expect([mayReach(key, "bedrock"), mayReach(key, "openai")]).toEqual([true, false]);
    const open = activeKey(keys.create({ name: "open" }));
    expect(forbidden(open, { scope: "chat", model: "anything", route: "any", upstream: "any" })).toBeUndefined();
  });
});

describe("the budget gate", () => {
  test("reserves at the model's price, settles at the answering model's, and refuses naming the budget", async () => {
    using keys = keysIn();
    const gate = createBudgetGate(keys.ledger, pricing);
    const key = activeKey(keys.create({ name: "capped", budget: { usd: 0.1, period: "day" } }));
    // 1000 in at $3/M + 4000 out at $15/M = $0.063.
    const first = await gate(key, "claude-x", 1000, 4000, NOON);
    if (!first.ok || !first.hold) throw new Error("expected a hold");
    expect(keys.ledger.spend(key.id, key.budget!, NOON)).toMatchObject({ used: 0, reserved: 0.063 });
    const second = await gate(key, "claude-x", 1000, 4000, NOON);
    expect(second).toEqual({
      ok: false,
      message: "Budget of key 'capped' ($0.1 a day) is used up: $0.0000 spent, $0.0630 held by requests in flight, this request needs up to $0.0630; it resets at 2026-11-28 00:00 UTC.",
      details: "budget: retry after 43200 seconds",
      retryAfter: 43_200,
    });
    // It fell back to the cheap model: 1000 in, 500 out at its price.
    await first.hold.settle("cheap", { input: 1000, output: 500, cacheRead: 0, cacheWrite: 0 });
    await first.hold.settle("cheap", { input: 1000, output: 500, cacheRead: 0, cacheWrite: 0 });
    expect(keys.ledger.spend(key.id, key.budget!, NOON)).toMatchObject({ used: 0.0003, reserved: 0 });
    const third = await gate(key, "claude-x", 1000, 4000, NOON);
    if (!third.ok || !third.hold) throw new Error("expected a hold");
    // A free upstream (the mock) answered: the usage record's price, not the table's.
    await third.hold.settle("claude-x", { input: 1000, output: 4000, cacheRead: 0, cacheWrite: 0 }, FREE);
    expect(keys.ledger.spend(key.id, key.budget!, NOON)).toMatchObject({ used: 0.0003, reserved: 0 });
  });

  test("a request bigger than the whole budget says to lower max_tokens; a failed call releases its hold", async () => {
    using keys = keysIn();
    const gate = createBudgetGate(keys.ledger, { ...pricing, maxOutputOf: () => 64_000 });
    const key = activeKey(keys.create({ name: "tokens", budget: { tokens: 10_000, period: "week" } }));
    const big = await gate(key, "claude-x", 100, undefined, NOON);
    expect(big).toMatchObject({ ok: false, message: "This request may cost up to 64,100 tokens, more than the whole budget of key 'tokens' (10,000 tokens a week): lower max_tokens." });
    const held = await gate(key, "claude-x", 100, 9_000, NOON);
    if (!held.ok || !held.hold) throw new Error("expected a hold");
    await held.hold.settle("claude-x", null);
    expect(keys.ledger.spend(key.id, key.budget!, NOON)).toMatchObject({ used: 0, reserved: 0 });
  });

  test("an unpriced model counts $0 against a dollar budget, and says so; a key without a budget passes", async () => {
    using keys = keysIn();
    const gate = createBudgetGate(keys.ledger, pricing);
    const key = activeKey(keys.create({ name: "dollars", budget: { usd: 1, period: "month" } }));
    const held = await gate(key, "local-llama", 5000, 1000, NOON);
    expect(held).toMatchObject({ ok: true, hold: { unpriced: true } });
    expect(await gate(activeKey(keys.create({ name: "free" })), "claude-x", 1, 1)).toEqual({ ok: true, hold: undefined });
  });
});
