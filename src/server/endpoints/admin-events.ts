import type { Database } from "bun:sqlite";
import { invalidRequest } from "../../errors.ts";
import { migrateUsage } from "../../usage/sqlite-store.ts";
import type { PlainEndpoint } from "../edge/endpoint.ts";

const POLL_MS = 500;
const PING_MS = 15_000;
const BATCH = 500;
/** Bytes a client may leave unread: past them, events are skipped (and the skip said) until it reads again. */
const UNREAD_MAX = 8 * 1024 * 1024;
const LAST_MAX = 1000;

/**
 * GET /admin/v1/events (contract 19): one `request` event per finished request, and a `: ping`
 * comment every 15 s. The events are the usage records, tailed from the database every worker
 * writes them to (within a second of the request's end): so one stream covers every worker, and no
 * request pays anything for it, watched or not. A bus through the supervisor would cost every
 * request a message even with no one watching, and would not reach gateways sharing the database.
 *
 * `?last=N` (the dashboard's Live page, which shows the newest 500): each poll sends at most the
 * newest N, after a `skipped` event counting the others. A page cannot show 10,000 rows a second,
 * and serializing them cost the worker serving the stream 2-3 µs for every request it answered.
 */
export function adminEvents(database: () => Database, pollMs = POLL_MS, unreadMax = UNREAD_MAX): PlainEndpoint {
  return {
    kind: "plain", method: "GET", path: "/admin/v1/events", scope: ["admin", "usage"], errors: "parley", cors: false,
    answer({ request, headers, query }) {
      const last = query.last === undefined ? undefined : Number(query.last);
      if (last !== undefined && !(Number.isInteger(last) && last >= 1 && last <= LAST_MAX)) throw invalidRequest(`'last' must be a whole number from 1 to ${LAST_MAX}.`);
      const tail = databaseTail(database(), last);
      const encoder = new TextEncoder();
      let poll: Timer | undefined;
      let ping: Timer | undefined;
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
              // A client that stops reading must not make the gateway hold everything since.
              const events = tail.read((controller.desiredSize ?? 0) <= 0);
              if (events !== "") send(events);
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
      summary: "Server-sent events: one `request` event per finished request (a usage record's fields with status, latency_ms, ttft_ms, session), from every worker; `: ping` every 15 s. With `?last=N` (1-1000), at most the newest N each half second, after a `skipped` event ({\"count\"}) for the others",
      tags: ["admin"],
    },
  };
}

/**
 * The records written since the last read, as `request` events: all of them, or the newest
 * `last`. `skip` (the client is not reading): none sent, but counted, and said once it reads again.
 */
function databaseTail(db: Database, last: number | undefined) {
  migrateUsage(db);
  // SQLite writes each event's JSON itself: a row read as a JS object and then stringified cost
  // the worker serving the stream a third more.
  const columns = db.query<{ name: string }, []>("SELECT name FROM pragma_table_info('usage')").all().map(({ name }) => `'${name}', "${name}"`);
  const after = db.query(`SELECT rowid, json_object(${columns.join(", ")}) FROM usage WHERE rowid > $after ORDER BY rowid LIMIT $limit`);
  const newest = db.query("SELECT coalesce(max(rowid), 0) FROM usage");
  const between = db.query("SELECT count(*) FROM usage WHERE rowid > $after AND rowid <= $upto");
  const batch = () => after.values({ after: seen, limit: BATCH }) as [number, string][];
  let seen = (newest.values() as [[number]])[0][0];
  let skipped = 0;
  const passOver = (upto: number) => {
    skipped += (between.values({ after: seen, upto }) as [[number]])[0][0];
    seen = upto;
  };
  return {
    read(skip: boolean): string {
      if (skip || last !== undefined) {
        const upto = (newest.values() as [[number]])[0][0];
        if (skip) passOver(upto);
        else if (upto - seen > last!) passOver(upto - last!);
      }
      if (skip) return "";
      let text = skipped > 0 ? `event: skipped\ndata: {"count":${skipped}}\n\n` : "";
      skipped = 0;
      for (let rows = batch(); rows.length > 0; rows = rows.length === BATCH ? batch() : []) {
        for (const [rowid, json] of rows) {
          seen = rowid;
          text += `event: request\ndata: ${json}\n\n`;
        }
      }
      return text;
    },
  };
}
