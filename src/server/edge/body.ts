import { GatewayError, invalidRequest } from "../../errors.ts";
import { isObject, type Json } from "../../lib/read.ts";

export const tooLarge = (max: number) =>
  new GatewayError(413, "invalid_request_error", `The request body is larger than the limit of ${max} bytes (MAX_UPLOAD_BYTES and 1 MiB for multipart framing).`);

/** A declared length over the limit is refused before a byte is read, on every path (Bun's own limit would answer with its own page). */
export function declaredTooLong(request: Request, max: number): boolean {
  const length = request.headers.get("content-length");
  return length !== null && Number(length) > max;
}

/** BODY_TIMEOUT_S and BODY_MIN_RATE: how long a body may take, as Apache's mod_reqtimeout counts it. */
export interface BodyTime {
  timeoutS: number;
  minRate: number;
}

export const bodyTimedOut = (time: BodyTime) =>
  new GatewayError(408, "invalid_request_error", `The request body did not arrive in time (BODY_TIMEOUT_S=${time.timeoutS} s, plus 1 s per BODY_MIN_RATE=${time.minRate} bytes received).`, { headers: { connection: "close" } });

/**
 * The request body as text, at most `max` bytes: a declared length over it is refused before a
 * byte is read, a chunked body is counted as it comes and refused once it goes over. With `time`,
 * a body that stops arriving is cut with a 408.
 */
export async function readText(request: Request, max: number, time?: BodyTime): Promise<string> {
  const length = request.headers.get("content-length");
  if (length !== null) {
    if (Number(length) > max) throw tooLarge(max);
    // A small body earns no time for its bytes: Bun's own read, under the one deadline.
    if (!time || Number(length) <= time.minRate) return time ? timed(request.text(), time, () => 0) : request.text();
  }
  if (!request.body) return "";
  if (!time) return collect(request.body, max, () => {});
  let seen = 0;
  return timed(collect(request.body, max, (n) => (seen = n)), time, () => seen);
}

/** The stream's bytes as text, in one buffer grown by doubling: never one array per chunk, so 1-byte chunks cost what their bytes do. */
async function collect(body: ReadableStream<Uint8Array>, max: number, progress: (seen: number) => void): Promise<string> {
  let buffer = new Uint8Array(16 * 1024);
  let seen = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    if (seen + chunk.byteLength > max) throw tooLarge(max);
    if (seen + chunk.byteLength > buffer.byteLength) {
      const grown = new Uint8Array(Math.min(Math.max(buffer.byteLength * 2, seen + chunk.byteLength), max));
      grown.set(buffer.subarray(0, seen));
      buffer = grown;
    }
    buffer.set(chunk, seen);
    seen += chunk.byteLength;
    progress(seen);
  }
  return Buffer.from(buffer.buffer, 0, seen).toString();
}

/** A body being read: when it began, and what it has received so far. */
interface Reading {
  start: number;
  time: BodyTime;
  received: () => number;
  fail: (error: GatewayError) => void;
}

/**
 * Every body being read, looked at by one sweeper every SWEEP_MS: a timer per body (set, then
 * cleared) and a race cost each request more than the rest of its read. A body is cut at most one
 * sweep after BODY_TIMEOUT_S plus a second per BODY_MIN_RATE bytes received.
 */
const reading = new Set<Reading>();
const SWEEP_MS = 250;
let sweeper: ReturnType<typeof setInterval> | undefined;

function sweep(): void {
  const now = performance.now();
  for (const r of reading) {
    if (now - r.start < (r.time.timeoutS + r.received() / r.time.minRate) * 1000) continue;
    reading.delete(r);
    r.fail(bodyTimedOut(r.time));
  }
  if (reading.size === 0 && sweeper !== undefined) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/** Watches a body from now: `fail` is told once its time is up. Returns what stops the watch. */
function watch(time: BodyTime, received: () => number, fail: (error: GatewayError) => void): () => void {
  const entry: Reading = { start: performance.now(), time, received, fail };
  reading.add(entry);
  if (sweeper === undefined) {
    sweeper = setInterval(sweep, SWEEP_MS);
    sweeper.unref?.();
  }
  return () => reading.delete(entry);
}

/** The read, or a 408 once the body's time is up. The read that loses fails once the connection closes: nobody waits for it. */
function timed(read: Promise<string>, time: BodyTime, received: () => number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const stop = watch(time, received, reject);
    read.then(
      (text) => {
        stop();
        resolve(text);
      },
      (error) => {
        stop();
        reject(error);
      },
    );
  });
}

/** A JSON endpoint's body: JSON, and an object; anything else is the client's 400. */
export function jsonObject(raw: string): Json {
  if (raw.trim() === "") throw invalidRequest("The request body is empty; send a JSON object.");
  if (raw.length > SCAN_FROM && nestedDeeper(raw, MAX_DEPTH)) throw tooDeep();
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (error) {
    throw invalidRequest("The request body is not valid JSON.", error instanceof Error ? error.message : undefined);
  }
  if (!isObject(body)) throw invalidRequest("The request body must be a JSON object.");
  if (deeperThan(body, MAX_DEPTH)) throw tooDeep();
  return body;
}

/** Contract 25: deeper JSON is refused, so that no converter recurses its way to a stack overflow. */
export const MAX_DEPTH = 512;
const tooDeep = () => invalidRequest(`The request body's JSON is nested deeper than ${MAX_DEPTH} levels.`);

/**
 * Bodies longer than this are looked at for depth before they are parsed: a 2 MB body nested a
 * million deep parsed into 86 MB of arrays before the check could refuse it. Shorter ones are
 * parsed first (their depth costs at most a few MB), so that an agent's every request pays no scan.
 */
const SCAN_FROM = 256 * 1024;

/** Whether the JSON text opens more than `max` arrays or objects at once: one pass, strings skipped. */
function nestedDeeper(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // A string: up to its closing quote, escapes skipped.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    } else if (c === 91 || c === 123) {
      if (++depth > max) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

/** Visits containers only (a long string costs nothing), and stops at the limit however deep the value goes. */
function deeperThan(value: unknown, left: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (left === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (deeperThan(item, left - 1)) return true;
    return false;
  }
  for (const key in value) if (deeperThan((value as Record<string, unknown>)[key], left - 1)) return true;
  return false;
}

/**
 * A request whose body its handler reads as a stream (an upload), with a chunked body counted as it
 * is read: the reader fails once it goes over `max`, and `over()` says so, whatever error the
 * handler made of the failed read. With `time`, a body that stops arriving fails the reader too,
 * and `late()` says so. Bytes the client still sends are drained by Bun, not buffered.
 */
export function counted(request: Request, max: number, time?: BodyTime): { request: Request; over: () => boolean; late: () => boolean } {
  const chunked = !request.headers.has("content-length") && request.headers.has("transfer-encoding");
  if ((!chunked && !time) || !request.body) return { request, over: () => false, late: () => false };
  let seen = 0;
  let late = false;
  let stop: (() => void) | undefined;
  const body = request.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    start(controller) {
      if (!time) return;
      stop = watch(time, () => seen, (error) => {
        late = true;
        controller.error(error);
      });
    },
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (!chunked || seen <= max) return controller.enqueue(chunk);
      controller.error(tooLarge(max));
    },
    flush() {
      stop?.();
    },
  }));
  return { request: new Request(request, { body, duplex: "half" } as RequestInit), over: () => seen > max, late: () => late };
}
