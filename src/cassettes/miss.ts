import { GatewayError } from "../errors.ts";
import type { HarEntry } from "./har.ts";
import { differences, type Call, type Difference } from "./match.ts";
import { entryCall } from "./cassette.ts";

/**
 * A call the cassette has no recording of (replay): a 404 naming the file and where the call
 * first differs from the nearest recording of the same upstream, so a test's author sees what changed.
 */
export function miss(file: string, entries: readonly HarEntry[], call: Call): GatewayError {
  const what = `${call.method} ${call.path} to upstream '${call.upstream}' (${call.kind})`;
  return new GatewayError(404, "not_found_error", `No recording in the cassette ${file} matches ${what}: ${why(entries, call)}.`);
}

function why(entries: readonly HarEntry[], call: Call): string {
  if (entries.length === 0) return "the cassette has no recordings (record them with --cassette-mode record or auto)";
  let best: { score: number; near: number; recorded: Call; first?: Difference } | undefined;
  for (const entry of entries) {
    if (entry._upstream !== call.upstream || entry._kind !== call.kind) continue;
    const recorded = entryCall(entry);
    const body = differences(call.json ?? call.text, recorded.json ?? recorded.text);
    const score = (recorded.method !== call.method ? 1e6 : 0) + (recorded.path !== call.path ? 1e3 : 0) + body.length;
    // Of recordings as far apart, the one whose first difference is most alike (a prompt edited, not another prompt).
    const near = body[0] ? alike(body[0]) : 0;
    if (!best || score < best.score || (score === best.score && near > best.near)) best = { score, near, recorded, first: body[0] };
  }
  if (!best) return `it holds no call to upstream '${call.upstream}' (${call.kind})`;
  const { recorded, first } = best;
  if (recorded.method !== call.method || recorded.path !== call.path) return `the nearest recording is of ${recorded.method} ${recorded.path}`;
  if (!first) return "its recordings of this call were all replayed";
  return `the nearest recording differs at ${first.path} (sent ${shown(first.sent)}, recorded ${shown(first.recorded)})`;
}

function shown(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** How alike the two sides of a difference are: one held in the other, else the length of their common start. */
function alike({ sent, recorded }: Difference): number {
  const a = JSON.stringify(sent) ?? "";
  const b = JSON.stringify(recorded) ?? "";
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  const held = short.length > 2 && long.includes(short.replace(/^"|"$/g, "")) ? 1e6 : 0;
  let common = 0;
  while (common < short.length && a[common] === b[common]) common++;
  return held + common;
}
