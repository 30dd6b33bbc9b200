import { createParser } from "eventsource-parser";
import { indexOf, lastIndexOf, utf8Slice } from "./bytes.ts";
import { GatewayError } from "../errors.ts";
import type { SseEvent } from "../ir.ts";

/** Server-sent events as the reply streams write them: `event:` when named, one `data:` line of JSON. */
export function sseText(events: SseEvent[]): string {
  let text = "";
  for (const { event, data } of events) text += `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
  return text;
}

/**
 * The data of an upstream's server-sent events as its chunks come: the events each chunk completes,
 * together (a list per chunk, not a promise per event). Names, ids and comments are left out.
 */
export async function* sseData(chunks: AsyncIterable<Uint8Array>, label = "The upstream"): AsyncGenerator<string[]> {
  let events: string[] = [];
  const parser = createParser({ onEvent: ({ data }) => void events.push(data) });
  const text = new TextDecoder();
  // Bytes since the last event ended: an endless line or event would otherwise grow the parser's buffer without end.
  let open = 0;
  for await (const bytes of chunks) {
    parser.feed(text.decode(bytes, { stream: true }));
    if (events.length === 0) {
      if ((open += bytes.byteLength) > MAX_EVENT) throw eventTooLarge(label);
      continue;
    }
    open = 0;
    const ready = events;
    events = [];
    yield ready;
  }
}

/** The longest stream line or event parley reads from an upstream (contract 25). */
export const MAX_EVENT = 16 * 1024 * 1024;

const eventTooLarge = (label: string) =>
  new GatewayError(502, "service_unavailable_error", `${label} sent a stream event or line over ${MAX_EVENT} bytes (16 MiB); parley stopped reading it.`);

/** Where the first event of server-sent events' bytes ends: a blank line, written with LF or CRLF as SSE allows; -1 before it. */
export function firstEventEnd(bytes: Uint8Array): number {
  const lf = indexOf.call(bytes, BLANK);
  const crlf = indexOf.call(bytes, BLANK_CRLF);
  return lf < 0 ? crlf : crlf < 0 ? lf : Math.min(lf, crlf);
}

/** The data of one event's text: its `data:` lines, joined. */
export const dataOf = (event: string): string =>
  event.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart()).join("\n");

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
  /**
   * How the dialect's error event begins (`event: error`): a stream whose last event is the
   * upstream's own error has said how it failed, and gets no second error from parley (contract 26).
   */
  failed?: string;
  /** How the dialect writes events, when not as server-sent events. */
  write?: (events: SseEvent[]) => Uint8Array;
}

/** Enough of a line to read an event name from it. */
const LINE_START = 256;

/** The last events the end check and the usage reader get: the last one and the usage event before it, and one more. */
const TAIL_EVENTS = 3;

/** Chunks kept from a stream's end (a power of two). */
const KEPT = 8;

/** Bytes kept of the last event of a dialect that names its events: its usage is inside, at the end. */
const LAST_EVENT_BYTES = 4 * 1024 * 1024;

/** What a guarded stream reads: a body, or a provider's own reader of its upstream (no stream of our own between). */
export type ByteSource = ReadableStream<Uint8Array> | AsyncIterator<Uint8Array, unknown>;

/** A byte source opened for reading, one chunk at a time. */
export interface Chunks {
  next(): Promise<IteratorResult<Uint8Array, unknown>>;
  /** Stops reading and releases the upstream. */
  cancel(reason?: unknown): Promise<unknown>;
}

export function openChunks(body: ByteSource): Chunks {
  if (!(body instanceof ReadableStream)) return { next: () => body.next(), cancel: async (reason) => body.return?.(reason) };
  const reader = body.getReader();
  return { next: () => reader.read() as Promise<IteratorResult<Uint8Array, unknown>>, cancel: (reason) => reader.cancel(reason) };
}

/**
 * An upstream's stream handed on byte for byte. When it breaks, or ends without its dialect's last
 * event (a truncated reply must not pass as complete), the client gets the dialect's error event
 * and the stream ends: it never just stops. Each chunk is only kept (a bounded tail, by reference);
 * the text of the last events is decoded once, at the end. `first` is the chunk the caller read
 * before it answered: it goes out with the response's head, in the same write.
 */
export function guardStream(
  source: Chunks,
  first: IteratorResult<Uint8Array, unknown>,
  ending: StreamEnding,
  /** What a failed read means (dropped connection, silence), and what a stream cut short means. */
  failure: (error: unknown) => Error,
  incomplete: () => GatewayError,
  onBreak: (error: GatewayError) => void,
  /**
   * Given the text of the last events of a complete stream (its usage event, if it sent one); undefined
   * when the client left before the end (what was held for the call is then released).
   */
  onEnd?: (tail: string | undefined) => void,
): ReadableStream<Uint8Array> {
  const names = ending.names;
  const tail = names ? lastEventTail() : ending.write ? byteTail() : chunkTail();
  // A named last event counts once its blank line has come: SSE readers drop an event cut short before it.
  const complete = (text: string) => (names ? names.includes(tail.name(text)) && (text.endsWith("\n\n") || text.endsWith("\r\n\r\n")) : text.includes(ending.last));
  let gone = false;
  const fail = (controller: ReadableStreamDirectController, error: GatewayError) => {
    onBreak(error);
    if (ending.write) {
      controller.write(ending.write(ending.error(error)));
      return controller.close();
    }
    // The upstream may have stopped mid-line or mid-event: a blank line first ends whatever it left
    // open, so the error is an event of its own.
    const last = tail.last();
    const open = last !== undefined && !(last.at(-1) === 10 && last.at(-2) === 10);
    controller.write(`${open ? "\n\n" : ""}${sseText(ending.error(error))}`);
    controller.close();
  };
  // A direct stream: each chunk is written straight to the client's socket from this one loop,
  // with no queue between (a pull per chunk cost ~9 µs more on a 54-chunk stream under load).
  return new ReadableStream<Uint8Array>({
    type: "direct",
    async pull(controller: ReadableStreamDirectController) {
      for (let next: IteratorResult<Uint8Array, unknown> | undefined = first; ; next = undefined) {
        try {
          next ??= await source.next();
        } catch (error) {
          if (gone) return;
          const failed = failure(error);
          return fail(controller, failed instanceof GatewayError ? failed : incomplete());
        }
        if (gone) return;
        if (next.done) break;
        tail.add(next.value);
        const written = controller.write(next.value);
        // A promise: the client's socket is full; the upstream is read no faster than the client reads.
        if (typeof written !== "number") await written;
      }
      const text = tail.text();
      if (!complete(text)) {
        if (!ending.failed || !lastEventIs(text, ending.failed)) return fail(controller, incomplete());
        onBreak(incomplete());
        return controller.close();
      }
      // The client has its last bytes before the usage is counted.
      controller.close();
      onEnd?.(text);
    },
    // Clients often stop reading at the last event (`[DONE]`): a stream left after it was complete.
    cancel(reason?: unknown) {
      gone = true;
      if (onEnd) {
        const text = tail.text();
        onEnd(complete(text) ? text : undefined);
      }
      return source.cancel(reason).then(() => {});
    },
  } as unknown as UnderlyingDefaultSource<Uint8Array>);
}

/** The last KEPT chunks, by reference: a ring, so nothing is copied or moved per chunk. Chunk `i` is `ring[i & (KEPT - 1)]`. */
function keptChunks() {
  const ring: Uint8Array[] = [];
  let count = 0;
  return {
    ring,
    add(chunk: Uint8Array) {
      ring[count++ & (KEPT - 1)] = chunk;
    },
    last: () => (count ? ring[(count - 1) & (KEPT - 1)] : undefined),
    count: () => count,
  };
}

/**
 * A stream's last KEPT chunks. Enough for its last events: a chunk is at least one upstream write,
 * and under load often many.
 */
function chunkTail() {
  const { ring, add, last, count: counted } = keptChunks();
  return {
    add,
    last,
    /**
     * The text of the last TAIL_EVENTS events (of all that is kept, if they cannot be told apart),
     * found from the end by their blank lines, in bytes: only that much is decoded.
     */
    text() {
      const count = counted();
      const parts: string[] = [];
      const oldest = Math.max(0, count - KEPT);
      let found = 0;
      for (let i = count - 1; i >= oldest; i--) {
        const chunk = ring[i & (KEPT - 1)]!;
        // The blank line that ends the stream ends the last event: it does not count.
        let from = chunk.length - (i === count - 1 ? 3 : 2);
        for (let at: number; from >= 0 && (at = lastIndexOf.call(chunk, BLANK, from)) >= 0; from = at - 1) {
          if (++found === TAIL_EVENTS) return joined(parts, utf8Slice.call(chunk, at + 2, chunk.length));
        }
        // A blank line split between this chunk and the one before.
        const split = i > oldest && chunk[0] === 10 && ring[(i - 1) & (KEPT - 1)]!.at(-1) === 10 && !(i === count - 1 && chunk.length === 1);
        if (split && ++found === TAIL_EVENTS) return joined(parts, utf8Slice.call(chunk, 1, chunk.length));
        parts.push(utf8Slice.call(chunk, 0, chunk.length));
      }
      return joined(parts, "");
    },
    name: (_text: string) => "",
  };
}

/** Bytes of a binary stream's end its dialect reads (Bedrock's last frames: a few hundred bytes each). */
const BINARY_TAIL_BYTES = 4096;

/**
 * For a dialect whose stream is not SSE (Bedrock's event stream): its last BINARY_TAIL_BYTES as
 * text, however many chunks they span. Its frames have no blank lines to find events by, and
 * decoding every kept chunk cost more than the rest of a passed-through stream.
 */
function byteTail() {
  const { ring, add, last, count: counted } = keptChunks();
  return {
    add,
    last,
    text() {
      const count = counted();
      const parts: string[] = [];
      let left = BINARY_TAIL_BYTES;
      for (let i = count - 1; i >= Math.max(0, count - KEPT) && left > 0; i--) {
        const chunk = ring[i & (KEPT - 1)]!;
        const from = Math.max(0, chunk.length - left);
        parts.push(utf8Slice.call(chunk, from, chunk.length));
        left -= chunk.length - from;
      }
      return joined(parts.slice(0, -1), parts.at(-1) ?? "");
    },
    name: (_text: string) => "",
  };
}

/**
 * For dialects that name their events: the bytes of the last event from its `event:` line on,
 * however large (the Responses API's `response.completed` repeats the whole reply, its usage at the
 * end), up to LAST_EVENT_BYTES, and its name, read from them at the end. JSON data holds no raw
 * newline, so `\nevent:` in the bytes is always an event's first line. Each chunk is searched in
 * place (decoding every chunk to text cost ~0.5 µs a chunk); `matched` carries an `\nevent:` cut
 * between chunks.
 */
function lastEventTail() {
  let chunks: Uint8Array[] = [];
  let offset = 0;
  let size = 0;
  /** How many bytes of `\nevent:` the stream so far ends with; the stream's start counts as a newline. */
  let matched = 1;
  /** The last event's name, kept when its first line had to be dropped (an event over LAST_EVENT_BYTES). */
  let dropped = "";
  return {
    add(chunk: Uint8Array) {
      const found = lastIndexOf.call(chunk, EVENT_LINE);
      const at = found >= 0 ? found + 1 : continued(chunk, matched);
      matched = endMatch(chunk, matched);
      if (at === undefined) {
        chunks.push(chunk);
        size += chunk.length;
        while (size - offset > LAST_EVENT_BYTES && chunks.length > 1) {
          // The chunk with the event's first line goes first: its name is read before it does.
          if (!dropped) dropped = nameIn(firstLine(chunks, offset));
          size -= chunks.shift()!.length;
          offset = 0;
        }
      } else if (at >= 0) {
        [chunks, offset, size, dropped] = [[chunk], at, chunk.length, ""];
      } else {
        // The `event:` line began `-at` bytes before this chunk, in the ones kept before it.
        let need = -at;
        let first = chunks.length;
        while (need > 0 && first > 0) need -= chunks[--first]!.length;
        chunks = chunks.slice(first);
        offset = Math.max(0, -need);
        chunks.push(chunk);
        size = chunks.reduce((sum, c) => sum + c.length, 0);
        dropped = "";
      }
    },
    last: () => chunks.at(-1),
    text: () => `\n${chunks.map((chunk, i) => utf8Slice.call(chunk, i === 0 ? offset : 0, chunk.length)).join("")}`,
    name: (text: string) => (text.startsWith("\nevent:") ? nameIn(text) : dropped),
  };
}

const EVENT_LINE = Buffer.from("\nevent:");

/**
 * Where an `event:` line begins, counted from `chunk` (negative: before it), when the stream's last
 * `matched` bytes and the chunk's first ones make an `\nevent:`.
 */
function continued(chunk: Uint8Array, matched: number): number | undefined {
  if (matched === 0 || chunk.length < EVENT_LINE.length - matched) return undefined;
  for (let i = matched; i < EVENT_LINE.length; i++) if (chunk[i - matched] !== EVENT_LINE[i]) return undefined;
  return 1 - matched;
}

/** How many bytes of `\nevent:` (short of all of it) the stream ends with after `chunk`. */
function endMatch(chunk: Uint8Array, before: number): number {
  const n = chunk.length;
  for (let i = n - 1; i >= 0 && i > n - EVENT_LINE.length; i--) {
    if (chunk[i] !== 10) continue;
    for (let j = i + 1; j < n; j++) if (chunk[j] !== EVENT_LINE[j - i]) return 0;
    return n - i;
  }
  // No newline in its last bytes: a short chunk may still go on with what the stream ended with.
  if (before === 0 || before + n >= EVENT_LINE.length) return 0;
  for (let j = 0; j < n; j++) if (chunk[j] !== EVENT_LINE[before + j]) return 0;
  return before + n;
}

/** Enough of the kept bytes' first line to read an event name from, as the tail's text begins. */
function firstLine(chunks: Uint8Array[], offset: number): string {
  let line = "\n";
  for (let i = 0; i < chunks.length && line.length <= LINE_START && line.indexOf("\n", 1) === -1; i++) {
    const from = i === 0 ? offset : 0;
    line += utf8Slice.call(chunks[i]!, from, Math.min(chunks[i]!.length, from + LINE_START));
  }
  return line;
}

/** The name on a text's first line, `\nevent: name\n…`; "" while that line is unfinished. */
function nameIn(text: string): string {
  const end = text.indexOf("\n", 1);
  return end === -1 || !text.startsWith("\nevent:") ? "" : text.slice(7, end).trim();
}

/** Whether the last event of an SSE text begins with `start`. */
function lastEventIs(text: string, start: string): boolean {
  const body = text.trimEnd();
  const at = Math.max(body.lastIndexOf("\n\n"), body.lastIndexOf("\r\n\r\n"));
  return body.slice(at < 0 ? 0 : at).trimStart().startsWith(start);
}

function joined(newestFirst: string[], oldest: string): string {
  let text = oldest;
  for (let i = newestFirst.length - 1; i >= 0; i--) text += newestFirst[i];
  return text;
}

const BLANK = Buffer.from("\n\n");
const BLANK_CRLF = Buffer.from("\r\n\r\n");
