import { bytesOf, rebuilt, type HarEntry } from "./har.ts";

/**
 * The recorded reply, as fetch would have given it: the same status, headers and body, a stream in
 * its recorded chunks (at once, or `paced` with the recorded gaps), and a recorded failure thrown
 * again (before the reply, or where the stream broke).
 */
export function replay(entry: HarEntry, paced: boolean, signal: AbortSignal | null | undefined): Response {
  signal?.throwIfAborted();
  const { status, statusText, headers, content, _error } = entry.response;
  if (status === 0) throw failure(_error);
  const bytes = bytesOf(content);
  const chunks = content._chunks;
  if (!chunks) return rebuilt(_error ? broken(bytes, _error) : bytes, status, statusText, headers);

  let i = 0;
  let offset = 0;
  let last = 0;
  const body = new ReadableStream<Uint8Array<ArrayBuffer>>({
    async pull(controller) {
      const chunk = chunks[i++];
      if (!chunk) return _error ? controller.error(failure(_error)) : controller.close();
      if (paced && chunk.time > last) await Bun.sleep(chunk.time - last);
      last = chunk.time;
      controller.enqueue(bytes.subarray(offset, (offset += chunk.size)));
    },
  });
  return rebuilt(body, status, statusText, headers);
}

/** A body whose reading failed after these bytes. */
function broken(bytes: Uint8Array<ArrayBuffer>, error: { name: string; message: string }): ReadableStream<Uint8Array<ArrayBuffer>> {
  return new ReadableStream({
    start(controller) {
      if (bytes.byteLength) controller.enqueue(bytes);
      controller.error(failure(error));
    },
  });
}

/** The recorded error, with its name (TimeoutError, TypeError…): the provider tells them apart as it did live. */
function failure(error: { name: string; message: string } | undefined): Error {
  const e = new Error(error?.message ?? "The recorded call failed.");
  e.name = error?.name ?? "Error";
  return e;
}
