import { contentOf, isStream, rebuilt, safeHeaders, safeUrl, type Chunk, type HarEntry } from "./har.ts";

/** What a recording needs of the call: who was called, and the body sent. */
export interface Sent {
  upstream: string;
  kind: string;
  url: string;
  init: BunFetchRequestInit;
  body: string;
}

/**
 * Calls the upstream and hands its reply on, writing the call down once its body is in: a JSON
 * reply read whole, a stream chunk by chunk as the caller reads it (the chunks' sizes and times
 * kept). A call that fails before any reply is written down too (status 0, as browsers do), so
 * that a replay fails, retries and falls back as the recording did; a call the client abandoned is not.
 */
export async function record(sent: Sent, write: (entry: HarEntry) => void): Promise<Response> {
  const startedDateTime = new Date().toISOString();
  const start = performance.now();
  const entry = (status: number, statusText: string, headers: Headers | undefined, bytes: Uint8Array, wait: number, chunks?: Chunk[], error?: unknown): HarEntry => {
    const mimeType = headers?.get("content-type") ?? "x-unknown";
    const receive = performance.now() - start - wait;
    return {
      startedDateTime,
      time: round(wait + receive),
      request: requestOf(sent),
      response: {
        status, statusText, httpVersion: "HTTP/1.1", cookies: [], headers: safeHeaders(headers),
        content: { ...contentOf(bytes, mimeType), ...(chunks ? { _chunks: chunks } : {}) },
        redirectURL: headers?.get("location") ?? "", headersSize: -1, bodySize: bytes.byteLength,
        ...(error ? { _error: errorOf(error) } : {}),
      },
      cache: {},
      timings: { send: 0, wait: round(wait), receive: round(receive) },
      _upstream: sent.upstream,
      _kind: sent.kind,
    };
  };

  let response: Response;
  try {
    response = await fetch(sent.url, sent.init);
  } catch (error) {
    if (!abandoned(error)) write(entry(0, "", undefined, new Uint8Array(), performance.now() - start, undefined, error));
    throw error;
  }
  const wait = performance.now() - start;
  const { status, statusText, headers } = response;
  if (!response.body || !isStream(headers.get("content-type") ?? "")) {
    let bytes: Uint8Array<ArrayBuffer>;
    try {
      bytes = new Uint8Array(await response.arrayBuffer());
    } catch (error) {
      if (!abandoned(error)) write(entry(status, statusText, headers, new Uint8Array(), wait, undefined, error));
      throw error;
    }
    write(entry(status, statusText, headers, bytes, wait));
    return rebuilt(bytes, status, statusText, headers);
  }

  const parts: Uint8Array[] = [];
  const chunks: Chunk[] = [];
  let finished = false;
  const finish = (error?: unknown) => {
    if (finished) return;
    finished = true;
    write(entry(status, statusText, headers, Buffer.concat(parts), wait, chunks, error));
  };
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let read: Awaited<ReturnType<typeof reader.read>>;
      try {
        read = await reader.read();
      } catch (error) {
        if (!abandoned(error)) finish(error);
        return controller.error(error);
      }
      if (read.done) {
        finish();
        return controller.close();
      }
      parts.push(read.value);
      chunks.push({ size: read.value.byteLength, time: round(performance.now() - start - wait) });
      controller.enqueue(read.value);
    },
    // The reader stopped early (it had what it needed, or the client left): what came is kept, and replays as it came.
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
  return rebuilt(body, status, statusText, headers);
}

function requestOf({ url, init, body }: Sent): HarEntry["request"] {
  const headers = safeHeaders(init.headers);
  const mimeType = new Headers(init.headers).get("content-type") ?? "application/json";
  const { url: safe, queryString } = safeUrl(url);
  return {
    method: init.method ?? "GET",
    url: safe,
    httpVersion: "HTTP/1.1",
    cookies: [],
    headers,
    queryString,
    ...(body ? { postData: { mimeType, text: body } } : {}),
    headersSize: -1,
    bodySize: Buffer.byteLength(body),
  };
}

const abandoned = (error: unknown) => (error as { name?: string } | null)?.name === "AbortError";

function errorOf(error: unknown): { name: string; message: string } {
  const e = error as { name?: unknown; message?: unknown } | null;
  return { name: typeof e?.name === "string" ? e.name : "Error", message: typeof e?.message === "string" ? e.message : String(error) };
}

const round = (ms: number) => Math.round(ms * 10) / 10;
