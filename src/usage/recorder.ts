import type { Logger } from "../log.ts";
import type { UsageRecord } from "./record.ts";
import type { UsageStore } from "./store.ts";

export { COLUMNS, hashSession, pushRow, type UsageRecord } from "./record.ts";

const FLUSH_EVERY_MS = 1000;
/**
 * Records that make a queue worth writing at once. A write starts cold (SQLite's code and pages out
 * of the CPU's caches after a few hundred requests): under load a row cost 1.8 µs in writes of 512,
 * 1.3 in writes of 2048 (a 2.7 ms write) and 1.2 in writes of 8192 (a 10 ms write, which every
 * request in flight would wait out).
 */
const FLUSH_AT = 2048;
/** Records per write: a long outage's backlog goes out in pieces, each its own transaction. */
const WRITE_AT_MOST = 5000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Unique across gateways and restarts without a random draw per request: a random prefix, then a count. */
const PROCESS_ID = crypto.randomUUID().replaceAll("-", "").slice(0, 16);
let sequence = 0;
export const nextUsageId = () => `${PROCESS_ID}${(sequence++).toString(36)}`;

export interface RecorderOptions {
  retentionDays: number;
  /** Records kept while the database is down (USAGE_BUFFER_MAX); more are dropped. */
  bufferMax: number;
  log: Logger;
  /** Counts records dropped (parley_usage_dropped_total). */
  dropped?: (count: number) => void;
}

/**
 * Usage records go into a queue and reach the store in one batch a second (or soon after FLUSH_AT
 * are queued, or when the app stops), so a request never waits for its own write. A write that
 * fails (the database is down) puts its records back: they wait in memory, up to `bufferMax`
 * (beyond that new ones are dropped, counted and logged), and go out with the next write that
 * works. Records older than the retention are deleted at the first write and then once a day.
 */
export function createRecorder(store: UsageStore, { retentionDays, bufferMax, log, dropped }: RecorderOptions) {
  let queue: UsageRecord[] = [];
  let timer: Timer | undefined;
  let writing: Promise<void> | undefined;
  let prunedAt = 0;
  let down = false;
  let lost = 0;

  function drop(count: number) {
    if (lost === 0) log.warn(`usage: ${bufferMax} records wait for the database (USAGE_BUFFER_MAX); newer ones are dropped`);
    lost += count;
    dropped?.(count);
  }

  function schedule() {
    if (timer || queue.length === 0) return;
    timer = setTimeout(() => void flush(), FLUSH_EVERY_MS);
    timer.unref();
  }

  async function writeQueued(): Promise<void> {
    while (queue.length > 0) {
      const records = queue.length > WRITE_AT_MOST ? queue.slice(0, WRITE_AT_MOST) : queue;
      queue = records === queue ? [] : queue.slice(WRITE_AT_MOST);
      try {
        await store.write(records);
      } catch (error) {
        queue = records.concat(queue);
        if (!down) log.error(`usage: the database is unreachable; records wait in memory (up to ${bufferMax}):`, error);
        down = true;
        if (queue.length > bufferMax) drop(queue.splice(bufferMax).length);
        return;
      }
      if (down) log.info("usage: the database is back; the records kept meanwhile are written");
      if (lost) log.warn(`usage: ${lost} records were dropped while the database was down (USAGE_BUFFER_MAX=${bufferMax})`);
      down = false;
      lost = 0;
    }
    const now = Date.now();
    if (now - prunedAt >= DAY_MS) {
      prunedAt = now;
      await store.prune(now - retentionDays * DAY_MS).catch((error) => log.warn("usage: old records not pruned:", error));
    }
  }

  /** Writes what is queued now (one write at a time); resolves once it is written or has failed. */
  async function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    while (writing) await writing;
    if (queue.length === 0) return;
    writing = writeQueued().finally(() => {
      writing = undefined;
      schedule();
    });
    await writing;
  }

  return {
    add(record: UsageRecord): void {
      if (down && queue.length >= bufferMax) return drop(1);
      // A full queue is written once the request that filled it has its answer.
      const length = queue.push(record);
      if (!down && (length === FLUSH_AT || length === bufferMax)) setImmediate(() => void flush());
      schedule();
    },
    /** Writes what is queued now: before a summary is read, and when the app stops. */
    flush,
    /** Records waiting to be written. */
    get queued() {
      return queue.length;
    },
  };
}

export type Recorder = ReturnType<typeof createRecorder>;
