import { indexOf } from "../../lib/bytes.ts";
import { isObject } from "../../lib/read.ts";
import { badShape, type Upstream } from "../../wire/upstream-errors.ts";
import type { Span } from "../../wire/event-stream/frames.ts";
import { renamedStart } from "../../wire/anthropic/reply.ts";
import { eventDecoder, parsePayload } from "../../wire/event-stream/read.ts";

/**
 * Claude's stream on Bedrock as Anthropic's server-sent events, each event's JSON as Bedrock sent it.
 * Read straight from the response body's chunks (the stream guard reads this, with no stream between): the
 * frames a chunk completes go out together, as one write, their events decoded from the frames'
 * bytes into the write's.
 */
export function relay(up: Upstream, chunks: AsyncIterator<Uint8Array, unknown>, requested: string): AsyncIterator<Uint8Array, unknown> {
  const decode = eventDecoder(up);
  // A frame that fails after good ones in the same chunk: they go out first, the error on the next read.
  let failed: { error: unknown } | undefined;
  return {
    async next() {
      if (failed) throw failed.error;
      for (;;) {
        const read = await chunks.next();
        if (read.done) {
          decode.end();
          return { done: true, value: undefined };
        }
        const frames = decode.frames(read.value);
        if (frames.length === 0) continue;
        const out = writer(frames);
        try {
          for (const frame of frames) {
            const { type, payload } = decode.event(frame);
            if (type === "chunk") writeEvent(up, out, payload, requested);
          }
        } catch (error) {
          if (out.at === 0) throw error;
          failed = { error };
        }
        if (out.at > 0) return { done: false, value: out.bytes.subarray(0, out.at) };
      }
    },
    async return(reason?: unknown) {
      await chunks.return?.(reason);
      return { done: true, value: undefined };
    },
  };
}

interface Writer {
  bytes: Uint8Array;
  at: number;
}

/** Room for the events of these frames, as a rule: base64 decodes to 3/4 of its length, and the name is part of it. */
function writer(frames: Span[]): Writer {
  let room = 0;
  for (const { start, end } of frames) room += EVENT_FRAMING + 2 * (end - start);
  return { bytes: Buffer.allocUnsafe(room), at: 0 };
}

/** `out`'s bytes with room for `n` more. */
function reserve(out: Writer, n: number): Uint8Array {
  if (out.at + n > out.bytes.length) {
    const grown = Buffer.allocUnsafe(2 * (out.at + n));
    grown.set(out.bytes.subarray(0, out.at));
    out.bytes = grown;
  }
  return out.bytes;
}

function writeText(out: Writer, text: string): void {
  const bytes = encoder.encode(text);
  reserve(out, bytes.length).set(bytes, out.at);
  out.at += bytes.length;
}

/**
 * A chunk's payload is `{"bytes":"<base64 of the model's event>", …}`. Anthropic writes every event
 * as `{"type":"<name>",…}`: such an event is written as `event: <name>` and the event's own bytes
 * as the data line, decoded from the base64 in place and its name read from its first bytes, as a
 * passed-through OpenAI stream's events are (parsing each cost more than the rest of the relay).
 * message_start (it names the model asked for), and any other text, takes the slow way: parsed to
 * check it, so an upstream's garbage never reaches a client as an event, it ends the stream with an
 * error event.
 */
function writeEvent(up: Upstream, out: Writer, payload: Span, requested: string): void {
  const { bytes, start: from, end: to } = payload;
  const key = indexOf.call(bytes, BYTES_KEY, from);
  const quote = key < 0 || key >= to ? -1 : indexOf.call(bytes, QUOTE, key + BYTES_KEY.length);
  if (quote >= 0 && quote < to && writeNamed(out, bytes, key + BYTES_KEY.length, quote)) return;
  writeText(out, sseEvent(up, eventText(up, payload), requested));
}

/** The fast way: false (`out.at` left where it was) unless the base64 is an event `{"type":"<name>",…}` other than message_start. */
function writeNamed(out: Writer, base64: Uint8Array, from: number, to: number): boolean {
  const peek = decodeBase64(base64, from, from + (Math.min(to - from, PEEK_CHARS) & ~3), head, 0);
  if (peek < TYPE_KEY.length + 2) return false;
  for (let i = 0; i < TYPE_KEY.length; i++) if (head[i] !== TYPE_KEY[i]) return false;
  let name = TYPE_KEY.length;
  while (name < peek && ((head[name]! >= 97 && head[name]! <= 122) || head[name] === 95)) name++;
  const length = name - TYPE_KEY.length;
  if (length === 0 || name + 1 >= peek || head[name] !== QUOTE || (head[name + 1] !== COMMA && head[name + 1] !== BRACE)) return false;
  if (length === MESSAGE_START.length && isMessageStart(head)) return false;
  const bytes = reserve(out, EVENT_FRAMING + length + ((to - from + 3) >> 2) * 3);
  let at = out.at;
  at = put(bytes, at, EVENT_PREFIX);
  for (let i = TYPE_KEY.length; i < name; i++) bytes[at++] = head[i]!;
  at = put(bytes, at, DATA_PREFIX);
  const end = decodeBase64(base64, from, to, bytes, at);
  if (end < 0 || bytes[end - 1] !== BRACE) return false;
  bytes[end] = NEWLINE;
  bytes[end + 1] = NEWLINE;
  out.at = end + 2;
  return true;
}

const isMessageStart = (head: Uint8Array) => {
  for (let i = 0; i < MESSAGE_START.length; i++) if (head[TYPE_KEY.length + i] !== MESSAGE_START[i]) return false;
  return true;
};

function put(bytes: Uint8Array, at: number, text: Uint8Array): number {
  for (let i = 0; i < text.length; i++) bytes[at + i] = text[i]!;
  return at + text.length;
}

/** The event's text from a payload the fast way could not write: its JSON read whole, its base64 as `atob` takes it. */
function eventText(up: Upstream, payload: Span): string {
  const parsed = parsePayload(up, payload);
  if (typeof parsed.bytes !== "string") throw badShape(up, "a chunk without bytes", JSON.stringify(parsed).slice(0, 500));
  let binary: string;
  try {
    binary = atob(parsed.bytes);
  } catch {
    throw badShape(up, "a chunk whose bytes are not base64", parsed.bytes.slice(0, 500));
  }
  return Buffer.from(binary, "latin1").toString("utf8");
}

/** `event: <its type>` and the event's text as the data line, the event parsed to check it; message_start names the model asked for. */
function sseEvent(up: Upstream, text: string, requested: string): string {
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    throw badShape(up, "a stream event that is not JSON", text.slice(0, 500));
  }
  if (!isObject(event) || typeof event.type !== "string" || !NAME.test(event.type)) throw badShape(up, "a stream event without a type", text.slice(0, 500));
  if (event.type === "message_start" && isObject(event.message)) {
    return `${renamedStart(event, event.message, requested)}\n\n`;
  }
  return `event: ${event.type}\ndata: ${text}\n\n`;
}

/**
 * Standard base64, padded or not, from `base64[from, to)` into `out` at `at`: where the decoded bytes
 * end, or -1 for anything else (a space, an escape, a bad length: the slow way decides). Written
 * by hand because the platform's decoders take a string and give a string (`atob`) or need a view
 * of each target (`setFromBase64`): reading the frame's bytes into the write's cost half as much.
 */
export function decodeBase64(base64: Uint8Array, from: number, to: number, out: Uint8Array, at: number): number {
  let i = from;
  for (; i + 4 <= to; i += 4) {
    const a = SEXTET[base64[i]!]!;
    const b = SEXTET[base64[i + 1]!]!;
    const c = SEXTET[base64[i + 2]!]!;
    const d = SEXTET[base64[i + 3]!]!;
    if ((a | b | c | d) < 0) break;
    out[at] = (a << 2) | (b >> 4);
    out[at + 1] = ((b & 15) << 4) | (c >> 2);
    out[at + 2] = ((c & 3) << 6) | d;
    at += 3;
  }
  if (i === to) return at;
  // The last group: two or three characters, then padding or the end.
  const a = SEXTET[base64[i]!]!;
  const b = i + 1 < to ? SEXTET[base64[i + 1]!]! : -1;
  const c = i + 2 < to ? SEXTET[base64[i + 2]!]! : PAD;
  const d = i + 3 < to ? SEXTET[base64[i + 3]!]! : PAD;
  if (a < 0 || b < 0 || to - i > 4 || d !== PAD || (c < 0 && c !== PAD) || (c === PAD && to - i === 3)) return -1;
  out[at++] = (a << 2) | (b >> 4);
  if (c !== PAD) out[at++] = ((b & 15) << 4) | (c >> 2);
  return at;
}

const PAD = -2;
/** Each base64 character's six bits; PAD for `=`, -1 for any other byte. */
const SEXTET = new Int8Array(256).fill(-1);
[..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"].forEach((char, i) => (SEXTET[char.charCodeAt(0)] = i));
SEXTET[61] = PAD;

const encoder = new TextEncoder();
const BYTES_KEY = Buffer.from('"bytes":"');
const TYPE_KEY = Buffer.from('{"type":"');
const MESSAGE_START = Buffer.from("message_start");
const EVENT_PREFIX = Buffer.from("event: ");
const DATA_PREFIX = Buffer.from("\ndata: ");
/** `event: `, `\ndata: `, the blank line. */
const EVENT_FRAMING = EVENT_PREFIX.length + DATA_PREFIX.length + 2;
/** Base64 characters decoded to read an event's name: 48 bytes, `{"type":"` and 39 for the name. */
const PEEK_CHARS = 64;
const head = new Uint8Array((PEEK_CHARS / 4) * 3);
const NAME = /^[a-z_]+$/;
const QUOTE = 34;
const COMMA = 44;
const BRACE = 125;
const NEWLINE = 10;
