import { limiter } from "../lib/concurrency.ts";
import type { FileCache } from "./cache.ts";
import type { FileMeta, FileStore } from "./store.ts";

/** How stale the cache may be: the store is listed at most once per window. */
export const SYNC_WINDOW_MS = 3_000;
/** Objects read at once when the listing shows files this gateway does not know. */
const HEADS_AT_ONCE = 8;

/**
 * Keeps the cache in step with the store, which other gateways may share: lists the store's ids at
 * most once per window, reads only the files the cache does not know, and forgets the ones gone.
 * Calls within the window share the last result; calls during a sync wait for it.
 */
export function storeSync(options: { store: FileStore; cache: FileCache; remember: (meta: FileMeta) => void; windowMs?: number }) {
  const { store, cache, remember, windowMs = SYNC_WINDOW_MS } = options;
  const head = limiter(HEADS_AT_ONCE);
  // Ids the store lists but that are no complete file (left by older versions): not read again.
  const unreadable = new Set<string>();
  let last = -Infinity;
  let running: Promise<void> | undefined;

  async function sync() {
    // Taken before the listing: a file this gateway adds meanwhile is not mistaken for one deleted elsewhere.
    const known = cache.ids();
    const listed = await store.ids();
    const present = new Set(listed);
    const unknown = listed.filter((id) => !known.has(id) && !unreadable.has(id));
    const metas = await Promise.all(unknown.map((id) => head(() => store.head(id))));
    metas.forEach((meta, i) => (meta ? remember(meta) : unreadable.add(unknown[i]!)));
    for (const id of known) if (!present.has(id)) cache.remove(id);
  }

  return function fresh(): Promise<void> {
    if (running) return running;
    if (performance.now() - last < windowMs) return Promise.resolve();
    const started = performance.now();
    running = sync()
      .then(() => void (last = started))
      .finally(() => (running = undefined));
    return running;
  };
}
