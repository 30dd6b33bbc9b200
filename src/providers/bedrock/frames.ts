import { badShape, type Upstream } from "../upstream-errors.ts";

/** An AWS event-stream message: at least prelude and message CRC, at most 16 MiB (AWS's limit). */
const MIN_FRAME = 16;
const MAX_FRAME = 16 * 1024 * 1024;

/**
 * Splits a Bedrock event stream into whole frames, checking each declared length before buffering
 * it. A body that is no event stream (an HTML page, JSON) reads as a frame of up to 4 GiB, which
 * a splitter that trusts the length (smithy's getChunkedStream) allocates at once: four such
 * replies took a server to 5 GB.
 */
export async function* frames(up: Upstream, body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let pending: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    pending.push(chunk);
    size += chunk.length;
    while (size >= 4) {
      const head = pending[0]!.length >= 4 ? pending[0]! : join(pending, size);
      const length = new DataView(head.buffer, head.byteOffset, 4).getUint32(0);
      if (length < MIN_FRAME || length > MAX_FRAME) throw badShape(up, `no event stream (a frame of ${length} bytes)`);
      if (size < length) break;
      const all = join(pending, size);
      yield all.subarray(0, length);
      const rest = all.subarray(length);
      [pending, size] = [rest.length ? [rest] : [], rest.length];
    }
  }
  if (size > 0) throw badShape(up, "an event stream cut off in the middle of a frame");
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
