/** The candidate closest to `name` (case ignored, a swap of two letters counts as one edit), if it is close enough to be a typo. */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  const wanted = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.ceil(wanted.length / 3)) + 1;
  for (const candidate of candidates) {
    // Lengths this far apart are at least this many edits apart: a client's megabyte-long model id
    // is never compared letter by letter with every known id.
    if (Math.abs(candidate.length - wanted.length) >= bestDistance) continue;
    const distance = editDistance(wanted, candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. Three rows of the table are all it needs. */
function editDistance(a: string, b: string): number {
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let row = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, before[j - 2]! + 1);
    }
    [before, previous, row] = [previous, row, before];
  }
  return previous[b.length]!;
}

/** Names a person may have meant: those containing what they typed, then the closest one. */
export function closeMatches(name: string, candidates: readonly string[], most = 3): string[] {
  const wanted = name.toLowerCase();
  const containing = candidates.filter((c) => c.toLowerCase().includes(wanted) || wanted.includes(c.toLowerCase()));
  const near = closest(name, candidates);
  return [...new Set([...(near ? [near] : []), ...containing])].slice(0, most);
}
