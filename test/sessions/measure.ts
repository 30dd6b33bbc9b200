/**
 * The numbers docs/upstreams.md quotes: what a session reads from the prompt caches of a weighted
 * 1:1 route, as a share of what one upstream alone would give, with affinity off and on.
 * `bun test/sessions/measure.ts [runs] [share of long pauses]`.
 */
import { agentSession, alone, cachesApp, play, readOf, startCaches } from "./fixture.ts";

const runs = Number(process.argv[2] ?? 40);
/** The share of pauses longer than a cache lives (default one in eight). */
const longPauses = Number(process.argv[3] ?? 0.125);
const caches = await startCaches();
const { a1, a2, us, eu } = caches.caches;
for (const [label, keys] of [["affinity = \"none\"", 'affinity = "none"'], ["affinity on (default)", ""]] as const) {
  const { json } = cachesApp(caches, keys);
  for (const [what, turnsOf, model, pair] of [["30 turns, two Anthropic keys", 30, undefined, [a1, a2]], ["16 turns, two Bedrock accounts", 16, "bedrock-sonnet", [us, eu]]] as const) {
    const shares: number[] = [];
    for (let run = 0; run < runs; run++) {
      caches.reset();
      const turns = agentSession(turnsOf, 1000 + run, undefined, longPauses);
      await play(json, turns, `measure-${label.length}-${run}`, model);
      shares.push(readOf([...pair]) / alone(turns));
    }
    shares.sort((x, y) => x - y);
    const mean = shares.reduce((s, x) => s + x, 0) / runs;
    const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
    console.log(`${label}, ${what}: mean ${pct(mean)}, median ${pct(shares[runs >> 1]!)}, quartiles ${pct(shares[runs >> 2]!)}-${pct(shares[(3 * runs) >> 2]!)}, min ${pct(shares[0]!)} (${runs} sessions)`);
  }
}
caches.stop();
