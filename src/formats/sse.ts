import { GatewayError } from "../errors.ts";
import type { SseEvent } from "../ir.ts";

/** Server-sent events as the reply streams write them: `event:` when named, one `data:` line of JSON. */
export function sseText(events: SseEvent[]): string {
  let text = "";
  for (const { event, data } of events) text += `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
  return text;
}

/** How a dialect's stream says it is complete, and how it says it failed. */
export interface StreamEnding {
  /** Text the last event of a complete stream contains. */
  last: string;
  /**
   * For dialects that name their events (`event: x`) and end with a large one (the Responses API's
   * `response.completed` repeats the whole reply): the names a complete stream may end with,
   * checked against the last `event:` line instead of the last bytes.
   */
  names?: string[];
  error: (error: GatewayError) => SseEvent[];
}

/** Enough of an unfinished line to read an event name from it. */
const LINE_START = 64;

/** Reads this many last chunks at the end: enough for the last event and a usage event before it. */
const TAIL_CHUNKS = 3;

/**
 * An upstream's stream handed on byte for byte. When it breaks, or ends without its dialect's last
 * event (a truncated reply must not pass as complete), the client gets the dialect's error event
 * and the stream ends: it never just stops. Only the last bytes are looked at, once, at the end.
 */
export function guardStream(
  body: ReadableStream<Uint8Array>,
  ending: StreamEnding,
  /** What a failed read means (dropped connection, silence), and what a stream cut short means. */
  failure: (error: unknown) => Error,
  incomplete: () => GatewayError,
  onBreak: (error: GatewayError) => void,
  /** Given the text of the last chunks of a complete stream (its usage event, if it sent one). */
  onEnd?: (tail: string) => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const recent: Uint8Array[] = [];
  const named = ending.names && lastEventName();
  const complete = (tail: string) => (named ? ending.names!.includes(named.name()) : tail.includes(ending.last));
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, error: GatewayError) => {
    onBreak(error);
    // The upstream may have stopped mid-line or mid-event: a blank line first ends whatever it left
    // open, so the error is an event of its own.
    const last = recent.at(-1);
    const open = last !== undefined && !(last.at(-1) === 10 && last.at(-2) === 10);
    controller.enqueue(new TextEncoder().encode(`${open ? "\n\n" : ""}${sseText(ending.error(error))}`));
    controller.close();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (error) {
        const failed = failure(error);
        return fail(controller, failed instanceof GatewayError ? failed : incomplete());
      }
      if (!next.done) {
        if (recent.push(next.value) > TAIL_CHUNKS) recent.shift();
        named?.feed(next.value);
        return controller.enqueue(next.value);
      }
      const tail = Buffer.concat(recent).toString();
      if (!complete(tail)) return fail(controller, incomplete());
      onEnd?.(tail);
      controller.close();
    },
    // Clients often stop reading at the last event (`[DONE]`): a stream left after it was complete.
    cancel(reason) {
      const tail = Buffer.concat(recent).toString();
      if (complete(tail)) onEnd?.(tail);
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}
/**
 * The name on the last complete `event:` line, read chunk by chunk. An unfinished line is carried
 * into the next chunk (its first bytes are enough); JSON data holds no raw newline, so a line that
 * starts with `event:` is an event's name, never text inside one.
 */
function lastEventName() {
  let carry = "\n";
  let name = "";
  return {
    feed(chunk: Uint8Array) {
      const text = carry + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("latin1");
      const end = text.lastIndexOf("\n");
      const at = end > 0 ? text.lastIndexOf("\nevent:", end - 1) : -1;
      if (at >= 0) name = text.slice(at + 7, text.indexOf("\n", at + 1)).trim();
      carry = text.slice(end, end + LINE_START);
    },
    name: () => name,
  };
}
