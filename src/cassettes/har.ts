import { VERSION } from "../version.ts";

/** HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/), as much of it as a cassette writes. */
export interface Har {
  log: { version: "1.2"; creator: { name: string; version: string }; entries: HarEntry[]; _upstreams?: Configured };
}

/**
 * The upstreams configured when a cassette was recorded, by name, each with what proved parley to
 * it as /health said (`static keys`; never a secret): replay configures the same ones (offline.ts).
 */
export type Configured = Record<string, { credentials?: string }>;

export interface NameValue {
  name: string;
  value: string;
}

/** One recorded upstream call; `_upstream` and `_kind` say which upstream it was (matched on replay). */
export interface HarEntry {
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: NameValue[];
    headers: NameValue[];
    queryString: NameValue[];
    postData?: { mimeType: string; text: string };
    headersSize: number;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: NameValue[];
    headers: NameValue[];
    content: HarContent;
    redirectURL: string;
    headersSize: number;
    bodySize: number;
    /** The call failed (status 0), or its body broke midway: thrown again on replay. */
    _error?: { name: string; message: string };
  };
  cache: Record<string, never>;
  timings: { send: number; wait: number; receive: number };
  _upstream: string;
  _kind: string;
}

export interface HarContent {
  size: number;
  mimeType: string;
  text?: string;
  /** `base64` for a binary body (AWS event-stream). */
  encoding?: "base64";
  /** A stream's chunks as they came: bytes, and milliseconds after the response's headers. */
  _chunks?: Chunk[];
}

export interface Chunk {
  size: number;
  time: number;
}

export const emptyHar = (): Har => ({ log: { version: "1.2", creator: { name: "parley", version: VERSION }, entries: [] } });

/** Names of headers and query parameters that carry secrets: never written. */
const SECRET = /auth|cookie|key|token|secret|signature|credential|password|session|organization|project|^sig$/i;

/** The headers worth writing down: none that proves who parley is. */
export function safeHeaders(headers: HeadersInit | undefined): NameValue[] {
  const out: NameValue[] = [];
  for (const [name, value] of new Headers(headers)) if (!SECRET.test(name)) out.push({ name, value });
  return out;
}

/** The URL with its secret query values replaced, and its query as HAR lists it. */
export function safeUrl(raw: string): { url: string; queryString: NameValue[] } {
  const url = new URL(raw);
  // A password in the upstream's URL (`http://user:secret@host`) is never written either.
  if (url.password) url.password = "REDACTED";
  const queryString: NameValue[] = [];
  for (const [name, value] of url.searchParams) {
    const safe = SECRET.test(name) ? "REDACTED" : value;
    queryString.push({ name, value: safe });
    if (safe !== value) url.searchParams.set(name, safe);
  }
  return { url: url.href, queryString };
}

/** Bodies kept as text where they are text (JSON, SSE); AWS event-stream and anything not UTF-8 as base64. */
export function contentOf(bytes: Uint8Array, mimeType: string): HarContent {
  const base = { size: bytes.byteLength, mimeType };
  if (!mimeType.includes("amazon.eventstream")) {
    try {
      return { ...base, text: strict.decode(bytes) };
    } catch {} // not UTF-8: base64 below
  }
  return { ...base, text: Buffer.from(bytes).toString("base64"), encoding: "base64" };
}

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export function bytesOf(content: HarContent): Uint8Array<ArrayBuffer> {
  if (content.text === undefined) return new Uint8Array();
  return content.encoding === "base64" ? Buffer.from(content.text, "base64") : new TextEncoder().encode(content.text);
}

/** Whether a reply is a stream, recorded chunk by chunk: SSE, or AWS event-stream. */
export const isStream = (mimeType: string) => mimeType.includes("event-stream") || mimeType.includes("amazon.eventstream");

/** A reply rebuilt around its bytes: the body is already decoded, and its length is its own. */
export function rebuilt(body: BodyInit, status: number, statusText: string, headers: Iterable<[string, string]> | NameValue[]): Response {
  return new Response(NO_BODY.has(status) ? null : body, { status, statusText, headers: replyHeaders(headers) });
}

const NO_BODY = new Set([101, 204, 205, 304]);

function replyHeaders(headers: Iterable<[string, string]> | NameValue[]): Headers {
  const out = new Headers();
  for (const item of headers) {
    const [name, value] = Array.isArray(item) ? item : [item.name, item.value];
    if (!REBUILT.has(name.toLowerCase())) out.append(name, value);
  }
  return out;
}

const REBUILT = new Set(["content-encoding", "content-length", "transfer-encoding"]);
