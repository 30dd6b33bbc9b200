import type { ChatOutcome } from "../../core/chat.ts";
import type { SseEvent } from "../../ir.ts";
import { sseText } from "../../lib/sse.ts";
import { clip } from "../../log.ts";
import type { Codec } from "../../wire/codec.ts";

const EVENT_STREAM = "application/vnd.amazon.eventstream";

/**
 * A chat outcome as the response: JSON, the upstream's own bytes, its stream, or our own events,
 * framed as server-sent events or, for `aws-event-stream`, in AWS's frames (the codec's `writeEvents`).
 */
export function reply(outcome: ChatOutcome, headers: Record<string, string>, framing: "sse" | "aws-event-stream" = "sse", output?: Codec): Response {
  Object.assign(headers, outcome.headers);
  // The model id is the client's text: a header value takes no lone surrogate, nor any non-Latin-1 character, nor a megabyte.
  const model = headers["x-parley-model"];
  if (model !== undefined) headers["x-parley-model"] = headerText(model);
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
      headers["cache-control"] = "no-cache";
      if (framing === "aws-event-stream") {
        headers["content-type"] = EVENT_STREAM;
        return new Response(eventStream(outcome.events, output!.writeEvents!), { headers });
      }
      headers["content-type"] = "text/event-stream";
      return new Response(eventStream(outcome.events), { headers });
  }
}

/**
 * Our own events written to the client as they come (a direct stream, as the stream guard's):
 * server-sent events, or another dialect's framing (`write`: Bedrock's event stream), waiting only
 * while the client's socket is full; leaving ends them.
 */
export function eventStream<T extends string | Uint8Array>(events: AsyncGenerator<SseEvent>, write: (events: SseEvent[]) => T = sseText as (events: SseEvent[]) => T): ReadableStream<T> {
  let gone = false;
  return new ReadableStream<T>({
    type: "direct",
    async pull(controller: ReadableStreamDirectController) {
      for (;;) {
        const next = await events.next();
        if (gone) return;
        if (next.done) return controller.close();
        const written = controller.write(write([next.value]));
        if (typeof written !== "number") await written;
      }
    },
    async cancel() {
      gone = true;
      await events.return(undefined);
    },
  } as unknown as UnderlyingDefaultSource<T>);
}

/** Printable ASCII as it is; anything else percent-encoded as UTF-8 (a lone surrogate as U+FFFD); cut past 200 characters. */
function headerText(text: string): string {
  const cut = clip(text);
  return /^[\x20-\x7e]*$/.test(cut) ? cut : cut.toWellFormed().replace(/[^\x20-\x7e]/gu, (c) => encodeURIComponent(c));
}
