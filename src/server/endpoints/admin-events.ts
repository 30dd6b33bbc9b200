import type { Database } from "bun:sqlite";
import type { UsageRecord } from "../../usage/recorder.ts";
import { migrateUsage } from "../../usage/sqlite-store.ts";
import type { PlainEndpoint } from "../edge/endpoint.ts";

const POLL_MS = 500;
const PING_MS = 15_000;
const BATCH = 500;

type Row = UsageRecord & { rowid: number };

/**
 * GET /admin/v1/events (contract 19): one `request` event per finished request, and a `: ping`
 * comment every 15 s. The events are the usage records, tailed from the database every worker
 * writes them to (within a second of the request's end): so one stream covers every worker, and no
 * request pays anything for it, watched or not. A bus through the supervisor would cost every
 * request a message even with no one watching, and would not reach gateways sharing the database.
 */
export function adminEvents(database: () => Database, pollMs = POLL_MS): PlainEndpoint {
  return {
    kind: "plain", method: "GET", path: "/admin/v1/events", scope: ["admin", "usage"], errors: "parley", cors: false,
    answer({ request, headers }) {
      const db = database();
      migrateUsage(db);
      const after = db.query<Row, { after: number; limit: number }>("SELECT rowid, * FROM usage WHERE rowid > $after ORDER BY rowid LIMIT $limit");
      let last = db.query<{ last: number | null }, []>("SELECT max(rowid) AS last FROM usage").get()?.last ?? 0;
      const encoder = new TextEncoder();
      let poll: Timer | undefined;
      let ping: Timer | undefined;
      const stop = () => {
        clearInterval(poll);
        clearInterval(ping);
      };
      const body = new ReadableStream<Uint8Array>({
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
            for (let rows = after.all({ after: last, limit: BATCH }); rows.length > 0; rows = rows.length === BATCH ? after.all({ after: last, limit: BATCH }) : []) {
              let text = "";
              for (const { rowid, ...record } of rows) {
                last = rowid;
                text += `event: request\ndata: ${JSON.stringify({ ...record, session: record.tag })}\n\n`;
              }
              send(text);
            }
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
      });
      return new Response(body, { headers: { ...headers, "content-type": "text/event-stream", "cache-control": "no-cache" } });
    },
    openapi: {
      summary: "Server-sent events: one `request` event per finished request (a usage record's fields with status, latency_ms, ttft_ms, session), from every worker; `: ping` every 15 s",
      tags: ["admin"],
    },
  };
}
