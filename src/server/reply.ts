import { sse } from "elysia";
import type { ChatOutcome } from "../chat.ts";

/** A chat outcome as the response: JSON, the upstream's own bytes, its stream, or our SSE events. */
export function reply(outcome: ChatOutcome, headers: Record<string, string>) {
  Object.assign(headers, outcome.headers);
  switch (outcome.kind) {
    case "json":
      return outcome.body;
    case "bytes":
      // A whole JSON reply goes out in one write, as the upstream wrote it.
      headers["content-type"] = outcome.contentType;
      return outcome.bytes;
    case "stream":
      headers["content-type"] = outcome.contentType;
      headers["cache-control"] = "no-cache";
      return new Response(outcome.body, { headers });
    case "events":
      return (async function* () {
        for await (const event of outcome.events) yield sse(event as { event?: string; data: unknown });
      })();
  }
}
