import type { GatewayError } from "../errors.ts";

/**
 * How often the sweeper looks at the open streams: a silent one ends within two ticks of
 * UPSTREAM_TIMEOUT_MS (Bun's socket idle timeout, checked every few seconds, took 5 to 8 s more).
 */
const TICK_MS = 100;

interface Watched {
  ms: number;
  /** A read is waiting for the upstream: only then does silence count (a slow client is not a silent upstream). */
  waiting: boolean;
  /** A chunk came since the last tick. */
  seen: boolean;
  /** The tick since which nothing came. */
  since: number;
  silent?: GatewayError;
  reader: ReadableStreamDefaultReader<Uint8Array>;
  timedOut: () => GatewayError;
}

/** The streams being read, and the one interval that sweeps them, running only while there are any. */
const open = new Set<Watched>();
let sweeper: Timer | undefined;

/**
 * An upstream's response body, read chunk by chunk; when the upstream sends nothing for `ms` while a
 * read waits, the read fails with `timedOut()` and the body is cancelled. One shared sweeper does the
 * timing, not a timer per chunk: a chunk costs two boolean writes, no clock read, no timer.
 */
export function boundedChunks(body: ReadableStream<Uint8Array>, ms: number, timedOut: () => GatewayError): AsyncIterableIterator<Uint8Array> & { next(): Promise<IteratorResult<Uint8Array, undefined>> } {
  const reader = body.getReader();
  const watched: Watched = { ms, waiting: false, seen: false, since: performance.now(), reader, timedOut };
  watch(watched);
  const arrived = (read: Awaited<ReturnType<typeof reader.read>>): IteratorResult<Uint8Array, undefined> => {
    watched.waiting = false;
    watched.seen = true;
    if (watched.silent) throw watched.silent;
    if (read.done) open.delete(watched);
    return read as IteratorResult<Uint8Array, undefined>;
  };
  const failed = (error: unknown): never => {
    open.delete(watched);
    throw watched.silent ?? error;
  };
  return {
    next() {
      watched.waiting = true;
      return reader.read().then(arrived, failed);
    },
    async return(reason?: unknown) {
      open.delete(watched);
      await reader.cancel(reason).catch(() => {});
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

function watch(watched: Watched) {
  open.add(watched);
  if (sweeper) return;
  sweeper = setInterval(sweep, TICK_MS);
  sweeper.unref();
}

function sweep() {
  const now = performance.now();
  for (const watched of open) {
    if (watched.seen || !watched.waiting) {
      watched.seen = false;
      watched.since = now;
    } else if (now - watched.since >= watched.ms) {
      open.delete(watched);
      watched.silent = watched.timedOut();
      // The waiting read ends (done), and `arrived` turns it into the error.
      watched.reader.cancel(watched.silent).catch(() => {});
    }
  }
  if (open.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/** Open streams being watched, for tests. */
export const watchedStreams = () => open.size;
