import { badShape, type Upstream } from "../upstream-errors.ts";

/** An AWS event-stream message: at least prelude and message CRC, at most 16 MiB (AWS's limit). */
const MIN_FRAME = 16;
const MAX_FRAME = 16 * 1024 * 1024;

/**
 * Splits a Bedrock event stream into whole frames as its chunks come, checking each declared length
 * before buffering it. A body that is no event stream (an HTML page, JSON) reads as a frame of up
 * to 4 GiB, which a splitter that trusts the length (smithy's getChunkedStream) allocates at once:
 * four such replies took a server to 5 GB.
 */
export function frameSplitter(up: Upstream) {
  let pending: Uint8Array[] = [];
  let size = 0;
  return {
    /** The frames this chunk completes. */
    push(chunk: Uint8Array): Uint8Array[] {
      const out: Uint8Array[] = [];
      pending.push(chunk);
      size += chunk.length;
      while (size >= 4) {
        const head = pending[0]!.length >= 4 ? pending[0]! : join(pending, size);
        const length = new DataView(head.buffer, head.byteOffset, 4).getUint32(0);
        if (length < MIN_FRAME || length > MAX_FRAME) throw badShape(up, `no event stream (a frame of ${length} bytes)`);
        if (size < length) break;
        const all = join(pending, size);
        out.push(all.subarray(0, length));
        const rest = all.subarray(length);
        [pending, size] = [rest.length ? [rest] : [], rest.length];
      }
      return out;
    },
    end() {
      if (size > 0) throw badShape(up, "an event stream cut off in the middle of a frame");
    },
  };
}

function join(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  chunks.splice(0, chunks.length, out);
  return out;
}

/** One event-stream message: its string headers (the only type Bedrock's events carry that parley reads) and payload. */
export interface Frame {
  headers: Map<string, string>;
  body: Uint8Array;
}

/**
 * Decodes one whole frame: prelude (total length, headers length, prelude CRC32), headers, payload,
 * message CRC32. Written out because smithy's codec took ~1.6 µs a frame (its CRC32 is JS) and this
 * one a tenth of that; the tests' fake Bedrock encodes its frames with smithy's.
 */
export function decodeFrame(frame: Uint8Array): Frame {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const total = view.getUint32(0);
  const headersLength = view.getUint32(4);
  if (total !== frame.length || headersLength > total - MIN_FRAME) throw new Error("lengths that do not add up");
  if (Bun.hash.crc32(frame.subarray(0, 8)) !== view.getUint32(8)) throw new Error("a prelude checksum that does not match");
  if (Bun.hash.crc32(frame.subarray(0, total - 4)) !== view.getUint32(total - 4)) throw new Error("a message checksum that does not match");
  const headers = new Map<string, string>();
  const end = 12 + headersLength;
  let at = 12;
  while (at < end) {
    const nameLength = frame[at]!;
    const name = latin1(frame, at + 1, at + 1 + nameLength);
    at += 1 + nameLength;
    const type = frame[at++];
    if (type === 7 || type === 6) {
      const length = view.getUint16(at);
      if (type === 7) headers.set(name, utf8.decode(frame.subarray(at + 2, at + 2 + length)));
      at += 2 + length;
    } else {
      const size = type === undefined ? undefined : FIXED_SIZE[type];
      if (size === undefined) throw new Error(`a header of unknown type ${type}`);
      at += size;
    }
  }
  if (at !== end) throw new Error("headers that overrun their length");
  return { headers, body: frame.subarray(end, total - 4) };
}

/** Value sizes of the fixed-size header types: bool true, bool false, byte, short, int, long, (6, 7: sized), timestamp, uuid. */
const FIXED_SIZE = [0, 0, 1, 2, 4, 8, undefined, undefined, 8, 16] as const;

const utf8 = new TextDecoder();
const latin1 = (bytes: Uint8Array, from: number, to: number) => Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString("latin1");
