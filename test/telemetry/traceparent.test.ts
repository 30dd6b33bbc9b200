import { expect, test } from "bun:test";
import { formatTraceparent, parseTraceparent, randomHex } from "../../src/telemetry/traceparent.ts";

const T = "4bf92f3577b34da6a3ce929d0e0e4736";
const P = "00f067aa0ba902b7";

test("a valid header round-trips", () => {
  const header = `00-${T}-${P}-01`;
  expect(parseTraceparent(header)).toEqual({ traceId: T, spanId: P, flags: 1 });
  expect(formatTraceparent(parseTraceparent(header)!)).toBe(header);
  expect(parseTraceparent(`00-${T}-${P}-00`)?.flags).toBe(0);
  expect(parseTraceparent(` 00-${T}-${P}-01 `)?.traceId).toBe(T);
});

test("invalid headers start a new trace", () => {
  for (const bad of [
    null,
    undefined,
    "",
    "garbage",
    `00-${T.toUpperCase()}-${P}-01`, // upper case hex is invalid
    `00-${"0".repeat(32)}-${P}-01`, // all-zero trace id
    `00-${T}-${"0".repeat(16)}-01`, // all-zero parent id
    `ff-${T}-${P}-01`, // version ff is forbidden
    `00-${T}-${P}-01-extra`, // version 00 has exactly four fields
    `00-${T.slice(1)}-${P}-01`,
    `00-${T}-${P}-1`,
    `00-${T}-${P}-0g`,
    `00_${T}_${P}_01`,
  ])
    expect(parseTraceparent(bad)).toBeNull();
});

test("a future version is read by its first four fields, and flags beyond sampled are kept", () => {
  expect(parseTraceparent(`01-${T}-${P}-03-whatever-comes-next`)).toEqual({ traceId: T, spanId: P, flags: 3 });
  expect(parseTraceparent(`cc-${T}-${P}-01`)?.spanId).toBe(P);
  // Written back as version 00, the only one parley speaks.
  expect(formatTraceparent({ traceId: T, spanId: P, flags: 3 })).toBe(`00-${T}-${P}-03`);
});

test("random ids are lower-case hex of the right length and differ", () => {
  const ids = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const t = randomHex(16);
    const s = randomHex(8);
    expect(t).toMatch(/^[0-9a-f]{32}$/);
    expect(s).toMatch(/^[0-9a-f]{16}$/);
    ids.add(t);
  }
  expect(ids.size).toBe(2000);
});
