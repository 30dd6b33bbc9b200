import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { agentSession, alone, cachesApp, play, readOf, startCaches } from "./fixture.ts";

const caches = await startCaches();
afterAll(() => caches.stop());
beforeEach(() => caches.reset());

const { a1, a2, us, eu } = caches.caches;

describe("a session stays on one upstream of a weighted route (contract 22)", () => {
  const { json } = cachesApp(caches);

  test("a 30-turn Claude Code session over two Anthropic keys, 1:1, reads what one upstream would give", async () => {
    const turns = agentSession(30, 7);
    const seen = await play(json, turns, "cc-session-0007");
    expect(seen.every((s) => s.status === 200)).toBe(true);
    const upstreams = new Set(seen.map((s) => s.upstream));
    expect(upstreams.size).toBe(1);
    expect(seen.map((s) => s.target)).toEqual(["new", ...Array(29).fill("kept")]);
    expect(readOf([a1, a2])).toBe(alone(turns));
    expect(alone(turns)).toBeGreaterThan(0);
  });

  test("a 16-turn session over two Bedrock accounts, 1:1, reads what one account would give", async () => {
    const turns = agentSession(16, 11);
    const seen = await play(json, turns, "cc-session-bedrock", "bedrock-sonnet");
    expect(seen.every((s) => s.status === 200)).toBe(true);
    expect(new Set(seen.map((s) => s.upstream)).size).toBe(1);
    expect(readOf([us, eu])).toBe(alone(turns));
  });

  test("forty concurrent sessions spread by weight, each kept on its upstream", async () => {
    const sessions = Array.from({ length: 40 }, (_, i) => ({ id: `spread-${i}`, turns: agentSession(4, 100 + i) }));
    const seen = await Promise.all(sessions.map((s) => play(json, s.turns, s.id)));
    for (const turns of seen) {
      expect(turns.every((t) => t.status === 200)).toBe(true);
      expect(new Set(turns.map((t) => t.upstream)).size).toBe(1);
    }
    const onOne = seen.filter((turns) => turns[0]!.upstream === "key-one").length;
    // 1:1 over 40 sessions: a binomial(40, 0.5) lands in 12..28 with probability 0.9985 (the hash is fixed, so this draw always lands the same).
    expect(onOne).toBeGreaterThanOrEqual(12);
    expect(onOne).toBeLessThanOrEqual(28);
  });
});

describe("without affinity (affinity = \"none\"), requests spread as before", () => {
  const { json } = cachesApp(caches, 'affinity = "none"');

  test("a 30-turn session goes to both keys, no x-parley-session-target, and reads less than one upstream would", async () => {
    const turns = agentSession(30, 7);
    const seen = await play(json, turns, "cc-session-0007");
    expect(new Set(seen.map((s) => s.upstream))).toEqual(new Set(["key-one", "key-two"]));
    expect(seen.every((s) => s.target === null)).toBe(true);
    expect(readOf([a1, a2])).toBeLessThan(alone(turns));
  });
});
