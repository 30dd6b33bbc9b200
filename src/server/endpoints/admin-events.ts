import { invalidRequest, unavailable } from "../../errors.ts";
import type { UsageStore } from "../../usage/store.ts";
import type { PlainEndpoint } from "../edge/endpoint.ts";

const POLL_MS = 500;
const PING_MS = 15_000;
const BATCH = 500;
/** Bytes a client may leave unread: past them, events are skipped (and the skip said) until it reads again. */
const UNREAD_MAX = 8 * 1024 * 1024;
const LAST_MAX = 1000;
/** How long a cursor a read passed over is asked for again (see `eventsTail`). */
const HOLE_MS = 10_000;
/** Cursors asked for again at most: a few batches of FLUSH_AT records in flight at once. */
const HOLES_MAX = 10_000;

/**
 * GET /admin/v1/events (contract 19): one `request` event per finished request, and a `: ping`
 * comment every 15 s. The events are the usage records, tailed from the usage store every worker
 * writes them to (within a second of the request's end), SQLite or the Postgres of every gateway
 * sharing it: so one stream covers every worker and every gateway, and no request pays anything
 * for it, watched or not. A bus through the supervisor would cost every request a message even
 * with no one watching, and would not reach gateways sharing the database.
 *
 * `?last=N` (the dashboard's Live page, which shows the newest 500): each poll sends at most the
 * newest N, after a `skipped` event counting the others. A page cannot show 10,000 rows a second,
 * and serializing them cost the worker serving the stream 2-3 µs for every request it answered.
 */
export function adminEvents(store: UsageStore, pollMs = POLL_MS, unreadMax = UNREAD_MAX): PlainEndpoint {
  return {
    kind: "plain", method: "GET", path: "/admin/v1/events", scope: ["admin", "usage"], errors: "parley", cors: false,
    async answer({ request, headers, query }) {
      const last = query.last === undefined ? undefined : Number(query.last);
      if (last !== undefined && !(Number.isInteger(last) && last >= 1 && last <= LAST_MAX)) throw invalidRequest(`'last' must be a whole number from 1 to ${LAST_MAX}.`);
      const tail = await eventsTail(store, last).catch(() => {
        throw unavailable("The usage database cannot be read right now; try again shortly.");
      });
      const encoder = new TextEncoder();
      let poll: Timer | undefined;
      let ping: Timer | undefined;
      let reading = false;
      const stop = () => {
        clearInterval(poll);
        clearInterval(ping);
      };
      const body = new ReadableStream<Uint8Array>(
        {
          start(controller) {
            const send = (text: string) => {
              try {
                controller.enqueue(encoder.encode(text));
              } catch {
                stop();
              }
            };
            send(": connected\n\n");
            poll = setInterval(() => {
              // A read still on its way (a slow database): this tick is skipped, so reads never overlap.
              if (reading) return;
              reading = true;
              // A client that stops reading must not make the gateway hold everything since.
              tail.read((controller.desiredSize ?? 0) <= 0).then(
                (events) => {
                  if (events !== "") send(events);
                },
                () => {}, // the database cannot be read: the next tick asks again, from where this one was
              ).finally(() => {
                reading = false;
              });
            }, pollMs);
            ping = setInterval(() => send(": ping\n\n"), PING_MS);
            request.signal.addEventListener("abort", () => {
              stop();
              try {
                controller.close();
              } catch {
                // closed already
              }
            });
          },
          cancel: stop,
        },
        { highWaterMark: unreadMax, size: (chunk) => chunk?.byteLength ?? 0 },
      );
      return new Response(body, { headers: { ...headers, "content-type": "text/event-stream", "cache-control": "no-cache" } });
    },
    openapi: {
      summary: "Server-sent events: one `request` event per finished request (a usage record's fields with status, latency_ms, ttft_ms, session), from every worker and every gateway sharing the database; `: ping` every 15 s. With `?last=N` (1-1000), at most the newest N each half second, after a `skipped` event ({\"count\"}) for the others",
      tags: ["admin"],
    },
  };
}

/**
 * The records written since the last read, as `request` events: all of them, or the newest
 * `last`. `skip` (the client is not reading): none sent, but counted, and said once it reads again.
 *
 * A record takes its cursor when it is written and is seen when its transaction commits. SQLite's
 * writers take turns, so records are seen in cursor order. Gateways sharing Postgres write at
 * once: a batch numbered 11-20 can commit after one numbered 21-30, and a read between the two
 * commits moves past 11-20 unseen. So the cursors a read passed over are asked for again for
 * HOLE_MS (a write is one transaction of two statements, committed well within that), and sent
 * when they turn up. What can still be missed: a record whose write stays open longer (the
 * database stalled mid-write), and one committed late under a cursor that `?last` or `skip`
 * passed without reading (it is then neither sent nor counted). That is fine for a live view: such
 * a record is still in /v1/usage and the latency figures, and the view is of what happens now.
 * Cursors no record takes (a batch written twice, a write rolled back) are asked for until HOLE_MS
 * pass; more than HOLES_MAX at once are not.
 */
async function eventsTail(store: UsageStore, last: number | undefined) {
  let seen = await store.newestEvent();
  let skipped = 0;
  /** Cursors passed over, each with when to stop asking for it, oldest first. */
  const holes = new Map<number, number>();
  const passOver = async (upto: number) => {
    skipped += await store.countEvents(seen, upto);
    seen = upto;
  };
  const batch = (limit: number) => store.eventsAfter(seen, limit, holes.size > 0 ? [...holes.keys()] : undefined);
  const forgetOld = (now: number) => {
    for (const [cursor, until] of holes) {
      if (until > now) break;
      holes.delete(cursor);
    }
  };
  return {
    async read(skip: boolean): Promise<string> {
      if (skip || last !== undefined) {
        const upto = await store.newestEvent();
        if (skip) await passOver(upto);
        else if (upto - seen > last!) await passOver(upto - last!);
      }
      if (skip) return "";
      let text = skipped > 0 ? `event: skipped\ndata: {"count":${skipped}}\n\n` : "";
      skipped = 0;
      const now = Date.now();
      forgetOld(now);
      // At most `last`: records committed since `upto` was read wait for the next poll.
      let left = last ?? Infinity;
      try {
        for (let limit = Math.min(BATCH, left); limit > 0; limit = Math.min(BATCH, left)) {
          const rows = await batch(limit);
          for (const [cursor, json] of rows) {
            if (cursor > seen) {
              for (let gap = seen + 1; gap < cursor && holes.size < HOLES_MAX; gap++) holes.set(gap, now + HOLE_MS);
              seen = cursor;
            } else {
              holes.delete(cursor);
            }
            text += `event: request\ndata: ${json}\n\n`;
          }
          left = rows.length < limit ? 0 : left - rows.length;
        }
      } catch {
        // The database cannot be read: what was read goes out, the rest at a later poll.
      }
      return text;
    },
  };
}
