/**
 * Betas parley did not pass on to an upstream that refuses them (contract 26): never dropped
 * silently. Counted by upstream and name for /metrics (`parley_betas_dropped_total`); the first
 * drop of each is told to `onFirstDrop`'s listener (the server logs it), once per process.
 */
const tally = new Map<string, { upstream: string; beta: string; count: number }>();
let listener: ((upstream: string, beta: string) => void) | undefined;

export function dropBeta(upstream: string, beta: string): void {
  const key = `${upstream}\u0000${beta}`;
  const known = tally.get(key);
  if (known) {
    known.count++;
    return;
  }
  // Beta names come from clients: past this many, they are counted under one name.
  if (tally.size >= MAX_NAMES) return dropBeta(upstream, "_other");
  tally.set(key, { upstream, beta, count: 1 });
  listener?.(upstream, beta);
}

const MAX_NAMES = 1000;

/** Every (upstream, beta) dropped so far, with how many times. */
export const droppedBetas = () => tally.values();

export function onFirstDrop(notice: (upstream: string, beta: string) => void): void {
  listener = notice;
}
