import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { startRedis } from "../lib/redis.ts";
import { agentSession, cachesApp, play, startCaches } from "./fixture.ts";

const caches = await startCaches();
afterAll(() => caches.stop());
beforeEach(() => caches.reset());

const fakeOf = (upstream: string | null) => (upstream === "key-one" ? caches.fakes.a1 : caches.fakes.a2);
const other = (upstream: string | null) => (upstream === "key-one" ? "key-two" : "key-one");

describe("a session moves only when its upstream fails, and stays where it moved (contract 22)", () => {
  test("an overloaded upstream: the session moves once, and stays on the one that answered after the first is back", async () => {
    const { json } = cachesApp(caches);
    const turns = agentSession(8, 21);
    const first = await play(json, turns.slice(0, 2), "failover-session");
    const home = first[0]!.upstream;
    expect(first.map((s) => s.target)).toEqual(["new", "kept"]);
    fakeOf(home).overloaded(1);
    const rest = await play(json, turns.slice(2), "failover-session");
    expect(rest.map((s) => s.upstream)).toEqual(Array(6).fill(other(home)));
    expect(rest.map((s) => s.target)).toEqual(["moved", "kept", "kept", "kept", "kept", "kept"]);
    // The first upstream was asked once more (the failed call), never after.
    expect(fakeOf(home).received.length).toBe(3);
  });

  test("MODEL_FALLBACKS are never sticky: the next request goes back to the session's upstream", async () => {
    const { json } = cachesApp(caches, "", { MODEL_FALLBACKS: "claude-sonnet-4-5=bedrock-sonnet" });
    const turns = agentSession(3, 22);
    const [one] = await play(json, turns.slice(0, 1), "fallback-session");
    caches.fakes.a1.overloaded(3);
    caches.fakes.a2.overloaded(3);
    const [two] = await play(json, turns.slice(1, 2), "fallback-session");
    expect(two!.upstream).toMatch(/^account-/);
    expect(two!.target).toBeNull();
    caches.reset();
    const [three] = await play(json, turns.slice(2), "fallback-session");
    expect([three!.upstream, three!.target]).toEqual([one!.upstream, "kept"]);
  });

  test("a count_tokens call that fails over does not move the session", async () => {
    const { json } = cachesApp(caches);
    const turns = agentSession(2, 25);
    const [one] = await play(json, turns.slice(0, 1), "count-session");
    fakeOf(one!.upstream).countErrors.push({ kind: "error", status: 529, type: "overloaded_error", message: "Overloaded" });
    const { model, system, tools, messages } = turns[1]!.body;
    const count = await json("/v1/messages/count_tokens", { model, system, tools, messages }, { headers: { "x-claude-code-session-id": "count-session", "anthropic-version": "2023-06-01" } });
    expect(count.status).toBe(200);
    expect(count.headers.get("x-parley-session-target")).toBeNull();
    const [two] = await play(json, turns.slice(1), "count-session");
    expect([two!.upstream, two!.target]).toEqual([one!.upstream, "kept"]);
  });

  test("affinity_ttl_s: a moved session not heard from for that long starts again at its first pick", async () => {
    const { json } = cachesApp(caches, "affinity_ttl_s = 1");
    const turns = agentSession(3, 23);
    const [one] = await play(json, turns.slice(0, 1), "ttl-session");
    fakeOf(one!.upstream).overloaded(1);
    const [two] = await play(json, turns.slice(1, 2), "ttl-session");
    expect([two!.upstream, two!.target]).toEqual([other(one!.upstream), "moved"]);
    // The route's own setting: one second without a request of the session, and a little more.
    await Bun.sleep(1300);
    const [three] = await play(json, turns.slice(2), "ttl-session");
    expect([three!.upstream, three!.target]).toEqual([one!.upstream, "new"]);
  });

  test("on an ordered route sessions start on its first target, and one that failed over stays on the second", async () => {
    const { json } = cachesApp(caches);
    const turns = agentSession(4, 24);
    const starts = await Promise.all(["o-1", "o-2", "o-3", "o-4", "o-5"].map((id) => play(json, turns.slice(0, 1), id, "ordered-sonnet")));
    expect(starts.map(([s]) => [s!.upstream, s!.target])).toEqual(Array(5).fill(["key-one", "new"]));
    caches.fakes.a1.overloaded(1);
    const after = await play(json, turns.slice(1), "o-1", "ordered-sonnet");
    expect(after.map((s) => [s.upstream, s.target])).toEqual([["key-two", "moved"], ["key-two", "kept"], ["key-two", "kept"]]);
    const [fresh] = await play(json, turns.slice(1, 2), "o-2", "ordered-sonnet");
    expect([fresh!.upstream, fresh!.target]).toEqual(["key-one", "kept"]);
  });
});

describe("with REDIS_URL, a move is shared by every gateway", () => {
  test("a session moved on one gateway is kept there by the next", async () => {
    await using redis = await startRedis();
    const one = cachesApp(caches, "", { REDIS_URL: redis.url });
    const two = cachesApp(caches, "", { REDIS_URL: redis.url });
    const turns = agentSession(4, 31);
    const [first] = await play(one.json, turns.slice(0, 1), "shared-session");
    fakeOf(first!.upstream).overloaded(1);
    const [moved] = await play(one.json, turns.slice(1, 2), "shared-session");
    expect([moved!.upstream, moved!.target]).toEqual([other(first!.upstream), "moved"]);
    const next = await play(two.json, turns.slice(2), "shared-session");
    expect(next.map((s) => [s.upstream, s.target])).toEqual([[moved!.upstream, "kept"], [moved!.upstream, "kept"]]);
  });

  test("without a shared Redis, the other gateway knows nothing of the move", async () => {
    const one = cachesApp(caches);
    const two = cachesApp(caches);
    const turns = agentSession(3, 32);
    const [first] = await play(one.json, turns.slice(0, 1), "unshared-session");
    fakeOf(first!.upstream).overloaded(1);
    await play(one.json, turns.slice(1, 2), "unshared-session");
    const [next] = await play(two.json, turns.slice(2), "unshared-session");
    expect([next!.upstream, next!.target]).toEqual([first!.upstream, "new"]);
  });
});
