import { badShape, type Upstream } from "../upstream-errors.ts";
import { utf8Slice } from "../../lib/bytes.ts";

/** An AWS event-stream message: at least prelude and message CRC, at most 16 MiB (AWS's limit). */
const MIN_FRAME = 16;
const MAX_FRAME = 16 * 1024 * 1024;

/** Bytes `start` to `end` of `bytes`: a frame or a payload, named without a subarray (which gives each chunk an ArrayBuffer object, ~300 ns). */
export interface Span {
  bytes: Uint8Array;
  start: number;
  end: number;
}

/**
 * Splits a Bedrock event stream into whole frames as its chunks come, checking each declared length
 * before buffering it. A body that is no event stream (an HTML page, JSON) reads as a frame of up
 * to 4 GiB, which a splitter that trusts the length (smithy's getChunkedStream) allocates at once:
 * four such replies took a server to 5 GB.
 */
export function frameSplitter(up: Upstream) {
  let bytes: Uint8Array = new Uint8Array(0);
  let at = 0;
  return {
    /** The frames this chunk completes. */
    push(chunk: Uint8Array): Span[] {
      // Only a frame split between chunks is copied.
      if (at < bytes.length) {
        const joined = new Uint8Array(bytes.length - at + chunk.length);
        joined.set(at ? bytes.subarray(at) : bytes);
        joined.set(chunk, bytes.length - at);
        bytes = joined;
      } else {
        bytes = chunk;
      }
      at = 0;
      const out: Span[] = [];
      while (bytes.length - at >= 4) {
        const length = uint32(bytes, at);
        if (length < MIN_FRAME || length > MAX_FRAME) throw badShape(up, `no event stream (a frame of ${length} bytes)`);
        if (bytes.length - at < length) break;
        out.push({ bytes, start: at, end: at + length });
        at += length;
      }
      return out;
    },
    end() {
      if (at < bytes.length) throw badShape(up, "an event stream cut off in the middle of a frame");
    },
  };
}

/** The headers of an event-stream message that parley reads (all strings on Bedrock's events). */
export interface FrameHeaders {
  ":message-type"?: string;
  ":event-type"?: string;
  ":exception-type"?: string;
  ":error-code"?: string;
  ":error-message"?: string;
}
type HeaderName = keyof FrameHeaders;
const READ: HeaderName[] = [":message-type", ":event-type", ":exception-type", ":error-code", ":error-message"];
const READ_BYTES = READ.map((name) => Buffer.from(name));

/** One event-stream message: the headers parley reads, and the payload. */
export interface Frame {
  headers: FrameHeaders;
  payload: Span;
}

/**
 * Decodes one whole frame: prelude (total length, headers length, prelude CRC32), headers, payload,
 * message CRC32 (which covers the prelude too; the splitter bounds the length before it is trusted).
 * Written out because smithy's codec took ~1.6 µs a frame (its CRC32 is JS) and this one a fraction
 * of that: header names are compared as bytes, and only the headers parley reads become strings
 * (the few values Bedrock repeats on every frame are made once). The tests' fake Bedrock encodes
 * its frames with smithy's.
 */
export function decodeFrame({ bytes, start, end }: Span): Frame {
  const total = uint32(bytes, start);
  const headersLength = uint32(bytes, start + 4);
  if (total !== end - start || headersLength > total - MIN_FRAME) throw new Error("lengths that do not add up");
  if (Bun.hash.crc32(bytes.subarray(start, end - 4)) !== uint32(bytes, end - 4)) throw new Error("a message checksum that does not match");
  const headers: FrameHeaders = {};
  const headersEnd = start + 12 + headersLength;
  let at = start + 12;
  while (at < headersEnd) {
    const nameLength = bytes[at]!;
    const name = nameLength === 0 ? -1 : readHeader(bytes, at + 1, nameLength);
    at += 1 + nameLength;
    const type = bytes[at++];
    if (type === 7 || type === 6) {
      const length = (bytes[at]! << 8) | bytes[at + 1]!;
      if (at + 2 + length > headersEnd) throw new Error("headers that overrun their length");
      if (type === 7 && name >= 0) headers[READ[name]!] = valueText(bytes, at + 2, at + 2 + length);
      at += 2 + length;
    } else {
      const size = type === undefined ? undefined : FIXED_SIZE[type];
      if (size === undefined) throw new Error(`a header of unknown type ${type}`);
      at += size;
    }
  }
  if (at !== headersEnd) throw new Error("headers that overrun their length");
  return { headers, payload: { bytes, start: headersEnd, end: end - 4 } };
}

/** Which of READ the name at `at` is, or -1. */
function readHeader(bytes: Uint8Array, at: number, length: number): number {
  next: for (let i = 0; i < READ_BYTES.length; i++) {
    const name = READ_BYTES[i]!;
    if (name.length !== length) continue;
    for (let j = 0; j < length; j++) if (bytes[at + j] !== name[j]) continue next;
    return i;
  }
  return -1;
}

/** Header values seen (`event`, `chunk`, event types): a frame's repeat is compared, not decoded. */
const seen: { bytes: Uint8Array; text: string }[] = [];
const MAX_SEEN = 64;
const MAX_SEEN_LENGTH = 48;

function valueText(bytes: Uint8Array, start: number, end: number): string {
  const length = end - start;
  if (length > MAX_SEEN_LENGTH) return utf8Slice.call(bytes, start, end);
  next: for (const known of seen) {
    if (known.bytes.length !== length) continue;
    for (let j = 0; j < length; j++) if (bytes[start + j] !== known.bytes[j]) continue next;
    return known.text;
  }
  const text = utf8Slice.call(bytes, start, end);
  if (seen.length < MAX_SEEN) seen.push({ bytes: bytes.slice(start, end), text });
  return text;
}

/** Value sizes of the fixed-size header types: bool true, bool false, byte, short, int, long, (6, 7: sized), timestamp, uuid. */
const FIXED_SIZE = [0, 0, 1, 2, 4, 8, undefined, undefined, 8, 16] as const;

const uint32 = (bytes: Uint8Array, at: number) => ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
