import type { SseEvent } from "../../ir.ts";

/**
 * AWS event-stream frames, as Bedrock writes its streams: prelude (total length, headers length,
 * prelude CRC32), headers, payload, message CRC32. The writer beside the reader (frames.ts), with
 * Bun's CRC32 (smithy's codec computes it in JavaScript); the tests read its frames with the AWS
 * SDK. An `exception` event (aws-errors.ts) becomes an exception frame, which the SDKs raise as
 * the exception its `type` names.
 */

const encoder = new TextEncoder();
/** Each event type's headers, encoded once. */
const headerCache = new Map<string, Uint8Array>();

export function writeEvents(events: SseEvent[]): Uint8Array {
  const frames = events.map(frameOf);
  if (frames.length === 1) return frames[0]!;
  const out = new Uint8Array(frames.reduce((sum, f) => sum + f.length, 0));
  let at = 0;
  for (const frame of frames) {
    out.set(frame, at);
    at += frame.length;
  }
  return out;
}

function frameOf({ event, data }: SseEvent): Uint8Array {
  if (event === "exception") {
    const { type, message } = data as { type: string; message: string };
    return frame(headers(":exception-type", type, "exception"), encoder.encode(JSON.stringify({ message })));
  }
  return frame(headers(":event-type", event ?? "chunk", "event"), encoder.encode(JSON.stringify(data)));
}

function headers(name: string, value: string, kind: "event" | "exception"): Uint8Array {
  const key = `${kind} ${value}`;
  let bytes = headerCache.get(key);
  if (!bytes) {
    bytes = concat([header(name, value), header(":content-type", "application/json"), header(":message-type", kind)]);
    if (headerCache.size < 256) headerCache.set(key, bytes);
  }
  return bytes;
}

/** A string header: name length, name, type 7, value length (2 bytes), value. */
function header(name: string, value: string): Uint8Array {
  const n = encoder.encode(name);
  const v = encoder.encode(value);
  const out = new Uint8Array(1 + n.length + 3 + v.length);
  out[0] = n.length;
  out.set(n, 1);
  out[1 + n.length] = 7;
  out[2 + n.length] = v.length >> 8;
  out[3 + n.length] = v.length & 0xff;
  out.set(v, 4 + n.length);
  return out;
}

function frame(head: Uint8Array, payload: Uint8Array): Uint8Array {
  const total = 12 + head.length + payload.length + 4;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, total);
  view.setUint32(4, head.length);
  view.setUint32(8, Bun.hash.crc32(out.subarray(0, 8)));
  out.set(head, 12);
  out.set(payload, 12 + head.length);
  view.setUint32(total - 4, Bun.hash.crc32(out.subarray(0, total - 4)));
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
