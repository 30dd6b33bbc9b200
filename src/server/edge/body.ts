import { GatewayError, invalidRequest } from "../../errors.ts";
import { isObject, type Json } from "../../lib/read.ts";

export const tooLarge = (max: number) =>
  new GatewayError(413, "invalid_request_error", `The request body is larger than the limit of ${max} bytes (MAX_UPLOAD_BYTES and 1 MiB for multipart framing).`);

/** A declared length over the limit is refused before a byte is read, on every path (Bun's own limit would answer with its own page). */
export function declaredTooLong(request: Request, max: number): boolean {
  const length = request.headers.get("content-length");
  return length !== null && Number(length) > max;
}

/**
 * The request body as text, at most `max` bytes: a declared length over it is refused before a
 * byte is read, a chunked body is counted as it comes and refused once it goes over.
 */
export async function readText(request: Request, max: number): Promise<string> {
  const length = request.headers.get("content-length");
  if (length !== null) {
    if (Number(length) > max) throw tooLarge(max);
    return request.text();
  }
  if (!request.body) return "";
  // One buffer grown by doubling, never one array per chunk: 1-byte chunks cost what their bytes do.
  let buffer = new Uint8Array(16 * 1024);
  let seen = 0;
  for await (const chunk of request.body as AsyncIterable<Uint8Array>) {
    if (seen + chunk.byteLength > max) throw tooLarge(max);
    if (seen + chunk.byteLength > buffer.byteLength) {
      const grown = new Uint8Array(Math.min(Math.max(buffer.byteLength * 2, seen + chunk.byteLength), max));
      grown.set(buffer.subarray(0, seen));
      buffer = grown;
    }
    buffer.set(chunk, seen);
    seen += chunk.byteLength;
  }
  return Buffer.from(buffer.buffer, 0, seen).toString();
}

/** A JSON endpoint's body: JSON, and an object; anything else is the client's 400. */
export function jsonObject(raw: string): Json {
  if (raw.trim() === "") throw invalidRequest("The request body is empty; send a JSON object.");
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (error) {
    throw invalidRequest("The request body is not valid JSON.", error instanceof Error ? error.message : undefined);
  }
  if (!isObject(body)) throw invalidRequest("The request body must be a JSON object.");
  return body;
}

/**
 * A request whose body its handler reads as a stream (an upload), with a chunked body counted as it
 * is read: the reader fails once it goes over `max`, and `over()` says so, whatever error the
 * handler made of the failed read. Bytes the client still sends are drained by Bun, not buffered.
 */
export function counted(request: Request, max: number): { request: Request; over: () => boolean } {
  if (request.headers.has("content-length") || !request.headers.has("transfer-encoding") || !request.body) return { request, over: () => false };
  let seen = 0;
  const body = request.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen <= max) return controller.enqueue(chunk);
      controller.error(tooLarge(max));
    },
  }));
  return { request: new Request(request, { body, duplex: "half" } as RequestInit), over: () => seen > max };
}
