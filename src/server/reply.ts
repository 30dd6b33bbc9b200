import type { ChatOutcome } from "../chat.ts";
import type { SseEvent } from "../ir.ts";
import { sseText } from "../formats/sse.ts";

/** A chat outcome as the response: JSON, the upstream's own bytes, its stream, or our SSE events. */
export function reply(outcome: ChatOutcome, headers: Record<string, string>): Response {
  Object.assign(headers, outcome.headers);
  switch (outcome.kind) {
    case "json":
      headers["content-type"] = "application/json";
      return new Response(JSON.stringify(outcome.body), { headers });
    case "bytes":
      // A whole JSON reply goes out in one write, as the upstream wrote it.
      headers["content-type"] = outcome.contentType;
      return new Response(outcome.bytes, { headers });
    case "stream":
      headers["content-type"] = outcome.contentType;
      headers["cache-control"] = "no-cache";
      return new Response(outcome.body, { headers });
    case "events":
      headers["content-type"] = "text/event-stream";
      headers["cache-control"] = "no-cache";
      return new Response(eventStream(outcome.events), { headers });
  }
}

/** Our own events as server-sent events, one at a time as the client reads; leaving ends them. */
function eventStream(events: AsyncGenerator<SseEvent>): ReadableStream<string> {
  return new ReadableStream<string>({
    async pull(controller) {
      const next = await events.next();
      if (next.done) return controller.close();
      controller.enqueue(sseText([next.value]));
    },
    async cancel() {
      await events.return(undefined);
    },
  }, { highWaterMark: 0 });
}
