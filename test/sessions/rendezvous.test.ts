import { describe, expect, test } from "bun:test";
import { byRendezvous } from "../../src/routing/affinity.ts";

const targets = [{ upstream: "big", model: "m", weight: 3 }, { upstream: "small", model: "m", weight: 1 }, { upstream: "spare", model: "m", weight: 0.0001 }];
const places = Array.from({ length: 4000 }, (_, i) => `place-${i}`);

describe("weighted rendezvous hashing", () => {
  test("sessions spread by weight: 3:1 puts about three in four on the first", () => {
    const firsts = places.map((p) => byRendezvous(targets.slice(0, 2), p)[0]!.upstream);
    const share = firsts.filter((u) => u === "big").length / places.length;
    // 4000 draws of p = 0.75: the standard deviation is 0.7 points.
    expect(share).toBeGreaterThan(0.72);
    expect(share).toBeLessThan(0.78);
  });

  test("the same order every time, and every target in it once", () => {
    for (const p of places.slice(0, 50)) {
      const order = byRendezvous(targets, p);
      expect(byRendezvous(targets, p)).toEqual(order);
      expect(new Set(order.map((t) => t.upstream)).size).toBe(3);
    }
  });

  test("a target added takes its share of sessions, and every other session stays where it was", () => {
    const before = places.map((p) => byRendezvous(targets.slice(0, 2), p)[0]!.upstream);
    const withThird = places.map((p) => byRendezvous([...targets.slice(0, 2), { upstream: "third", model: "m", weight: 1 }], p)[0]!.upstream);
    for (let i = 0; i < places.length; i++) if (withThird[i] !== "third") expect(withThird[i]).toBe(before[i]!);
    const moved = withThird.filter((u) => u === "third").length / places.length;
    expect(moved).toBeGreaterThan(0.17);
    expect(moved).toBeLessThan(0.23);
  });
});
