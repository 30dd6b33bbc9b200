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

/** The last events the end check and the usage reader get: the last one and the usage event before it, and one more. */
const TAIL_EVENTS = 3;

/** Bytes kept from a stream's end, at least: more than its last events take. */
const TAIL_BYTES = 16 * 1024;

/** Bytes kept of the last event of a dialect that names its events: its usage is inside, at the end. */
const LAST_EVENT_BYTES = 4 * 1024 * 1024;

/** What a guarded stream reads: a body, or a provider's own reader of its upstream (no stream of our own between). */
export type ByteSource = ReadableStream<Uint8Array> | AsyncIterator<Uint8Array, unknown>;

/**
 * An upstream's stream handed on byte for byte. When it breaks, or ends without its dialect's last
 * event (a truncated reply must not pass as complete), the client gets the dialect's error event
 * and the stream ends: it never just stops. Each chunk is only kept (a bounded tail, by reference);
 * the text of the last events is decoded once, at the end.
 */
export function guardStream(
  body: ByteSource,
  ending: StreamEnding,
  /** What a failed read means (dropped connection, silence), and what a stream cut short means. */
  failure: (error: unknown) => Error,
  incomplete: () => GatewayError,
  onBreak: (error: GatewayError) => void,
  /** Given the text of the last events of a complete stream (its usage event, if it sent one). */
  onEnd?: (tail: string) => void,
): ReadableStream<Uint8Array> {
  const source = body instanceof ReadableStream ? readerOf(body) : body;
  const names = ending.names;
  const tail = names ? lastEventTail() : byteTail();
  const complete = (text: string) => (names ? names.includes(tail.name()) : text.includes(ending.last));
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, error: GatewayError) => {
    onBreak(error);
    // The upstream may have stopped mid-line or mid-event: a blank line first ends whatever it left
    // open, so the error is an event of its own.
    const last = tail.last();
    const open = last !== undefined && !(last.at(-1) === 10 && last.at(-2) === 10);
    controller.enqueue(new TextEncoder().encode(`${open ? "\n\n" : ""}${sseText(ending.error(error))}`));
    controller.close();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: IteratorResult<Uint8Array, unknown>;
      try {
        next = await source.next();
      } catch (error) {
        const failed = failure(error);
        return fail(controller, failed instanceof GatewayError ? failed : incomplete());
      }
      if (!next.done) {
        tail.add(next.value);
        return controller.enqueue(next.value);
      }
      const text = tail.text();
      if (!complete(text)) return fail(controller, incomplete());
      onEnd?.(text);
      controller.close();
    },
    // Clients often stop reading at the last event (`[DONE]`): a stream left after it was complete.
    async cancel(reason) {
      if (onEnd) {
        const text = tail.text();
        if (complete(text)) onEnd(text);
      }
      await source.return?.(reason);
    },
  }, { highWaterMark: 0 });
}

function readerOf(body: ReadableStream<Uint8Array>): AsyncIterator<Uint8Array, unknown> {
  const reader = body.getReader();
  return {
    next: () => reader.read() as Promise<IteratorResult<Uint8Array, unknown>>,
    return: async (reason?: unknown) => {
      await reader.cancel(reason);
      return { done: true, value: undefined };
    },
  };
}

/** A stream's last chunks, by reference, covering at least its last TAIL_BYTES. */
function byteTail() {
  const chunks: Uint8Array[] = [];
  let size = 0;
  return {
    add(chunk: Uint8Array) {
      chunks.push(chunk);
      size += chunk.length;
      while (size - chunks[0]!.length >= TAIL_BYTES) size -= chunks.shift()!.length;
    },
    last: () => chunks.at(-1),
    /** The text of the last TAIL_EVENTS events (all that is kept, if they cannot be told apart). */
    text: () => decodeFrom(chunks, ...startOfLastEvents(chunks)),
    name: () => "",
  };
}

/**
 * For dialects that name their events: the last event's name, and its bytes from its `event:` line
 * on, however large (the Responses API's `response.completed` repeats the whole reply, its usage at
 * the end), up to LAST_EVENT_BYTES.
 */
function lastEventTail() {
  const named = lastEventName();
  let chunks: Uint8Array[] = [];
  let size = 0;
  return {
    add(chunk: Uint8Array) {
      const at = named.feed(chunk);
      if (at === undefined) {
        chunks.push(chunk);
        size += chunk.length;
        while (size > LAST_EVENT_BYTES && chunks.length > 1) size -= chunks.shift()!.length;
      } else if (at >= 0) {
        chunks = [chunk.subarray(at)];
        size = chunks[0]!.length;
      } else {
        // The `event:` line began `-at` bytes before this chunk, in the ones kept before it.
        let need = -at;
        let first = chunks.length;
        while (need > 0 && first > 0) need -= chunks[--first]!.length;
        chunks = chunks.slice(first);
        if (need < 0) chunks[0] = chunks[0]!.subarray(-need);
        chunks.push(chunk);
        size = chunks.reduce((sum, c) => sum + c.length, 0);
      }
    },
    last: () => chunks.at(-1),
    text: () => `\n${decodeFrom(chunks, 0, 0)}`,
    name: named.name,
  };
}

/**
 * The name on the last complete `event:` line, read chunk by chunk. An unfinished line is carried
 * into the next chunk (its first bytes are enough); JSON data holds no raw newline, so a line that
 * starts with `event:` is an event's name, never text inside one. `feed` tells where in the chunk
 * the last `event:` line it saw begins (negative: that many bytes before the chunk), if it saw one.
 */
function lastEventName() {
  let carry = "\n";
  let name = "";
  return {
    feed(chunk: Uint8Array): number | undefined {
      const before = carry.length;
      const text = carry + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("latin1");
      const end = text.lastIndexOf("\n");
      const at = end > 0 ? text.lastIndexOf("\nevent:", end - 1) : -1;
      if (at >= 0) name = text.slice(at + 7, text.indexOf("\n", at + 1)).trim();
      // An event line still unfinished at the chunk's end begins an event too: its bytes are kept.
      const rest = text.length - end;
      const open = rest > 1 && (rest >= 7 ? text.startsWith("\nevent:", end) : "\nevent:".startsWith(text.slice(end)));
      const start = open ? end : at;
      carry = text.slice(end, end + LINE_START);
      return start >= 0 ? start + 1 - before : undefined;
    },
    name: () => name,
  };
}

/** Where the last TAIL_EVENTS events begin in `chunks`: after the blank line before them. */
function startOfLastEvents(chunks: Uint8Array[]): [number, number] {
  let found = 0;
  for (let i = chunks.length - 1; i >= 0; i--) {
    const chunk = chunks[i]!;
    const view = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    // The blank line that ends the stream ends the last event: it does not count.
    let from = i === chunks.length - 1 ? view.length - 3 : view.length - 2;
    for (let at = view.lastIndexOf(BLANK, from); at >= 0 && from >= 0; at = view.lastIndexOf(BLANK, (from = at - 1))) {
      if (++found === TAIL_EVENTS) return [i, at + 2];
    }
    // A blank line split between this chunk and the one before.
    if (i > 0 && view[0] === 10 && chunks[i - 1]!.at(-1) === 10 && !(i === chunks.length - 1 && view.length === 1)) {
      if (++found === TAIL_EVENTS) return [i, 1];
    }
  }
  return [0, 0];
}

const BLANK = "\n\n";

function decodeFrom(chunks: Uint8Array[], index: number, offset: number): string {
  if (index >= chunks.length) return "";
  const first = chunks[index]!.subarray(offset);
  if (index === chunks.length - 1) return utf8.decode(first);
  return utf8.decode(Buffer.concat([first, ...chunks.slice(index + 1)]));
}

const utf8 = new TextDecoder();
