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
  error: (error: GatewayError) => SseEvent[];
}

const TAIL_BYTES = 64;

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
  incomplete: GatewayError,
  onBreak: (error: GatewayError) => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let previous: Uint8Array | undefined;
  let latest: Uint8Array | undefined;
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, error: GatewayError) => {
    onBreak(error);
    // The upstream may have stopped mid-line or mid-event: a blank line first ends whatever it left
    // open, so the error is an event of its own (after a complete event, SSE parsers skip it).
    controller.enqueue(new TextEncoder().encode(`\n\n${sseText(ending.error(error))}`));
    controller.close();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (error) {
        const failed = failure(error);
        return fail(controller, failed instanceof GatewayError ? failed : incomplete);
      }
      if (!next.done) {
        [previous, latest] = [latest, next.value];
        return controller.enqueue(next.value);
      }
      if (!tail(previous, latest).includes(ending.last)) return fail(controller, incomplete);
      controller.close();
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
}

function tail(previous: Uint8Array | undefined, latest: Uint8Array | undefined): string {
  const bytes = Buffer.concat([previous?.subarray(-TAIL_BYTES) ?? new Uint8Array(), latest?.subarray(-TAIL_BYTES) ?? new Uint8Array()]);
  return bytes.toString("latin1");
}
