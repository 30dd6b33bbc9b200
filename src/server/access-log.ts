import { maskSecrets } from "../secrets.ts";
import { writeSync } from "node:fs";
import type { LogFormat } from "../log.ts";

const FLUSH_MS = 50;

/** What a request leaves for its log line; formatted later, in the batch. Never secrets or content. */
export interface AccessEntry {
  /** Epoch ms when the request arrived. */
  at: number;
  method: string;
  /** The request URL; path and query are cut out in the batch. Not the Request: holding those held far more memory. */
  url: string;
  status: number;
  ms: number;
  id: string;
  model?: string;
  provider?: string;
  /** The `[[routes]]` entry that routed it: its name, else its place. */
  route?: string;
  upstream_ms?: number;
  /** Upstream calls it took, when more than one (retries, fallbacks). */
  attempts?: number;
  /** A stream that ended early: what happened. */
  broken?: string;
}

export interface AccessLogOptions {
  tag?: string;
  /** Adds the upstream's time to first byte (LOG_LEVEL=debug). */
  upstream?: boolean;
  format?: LogFormat;
}

/**
 * The request log's writer: one line per request, formatted and written in batches at most 50 ms
 * late (and at exit), so a request pays for an array push, not for string building or a write.
 */
export function createAccessLog({ tag, upstream = false, format = "text" }: AccessLogOptions = {}): (entry: AccessEntry) => void {
  const prefix = tag ? `[${tag}] ` : "";
  // Lines of one second share the ISO prefix; only the milliseconds differ.
  let second = -1;
  let secondText = "";
  const timestamp = (at: number) => {
    const s = Math.floor(at / 1000);
    if (s !== second) [second, secondText] = [s, new Date(s * 1000).toISOString().slice(0, 20)];
    return `${secondText}${String(at % 1000).padStart(3, "0")}Z`;
  };
  const text = (e: AccessEntry) => {
    let line = `${prefix}${timestamp(e.at)} ${e.method} ${target(e.url)} ${e.status} ${e.ms.toFixed(1)}ms`;
    if (e.model) line += ` model=${quoteIfNeeded(e.model)}`;
    if (e.provider) line += ` provider=${e.provider}`;
    if (e.route) line += ` route=${quoteIfNeeded(e.route)}`;
    if (upstream && e.upstream_ms !== undefined) line += ` upstream_ms=${e.upstream_ms}`;
    if (e.attempts !== undefined && e.attempts > 1) line += ` attempts=${e.attempts}`;
    if (e.broken) line += ` stream=broken reason=${JSON.stringify(e.broken)}`;
    return `${line} id=${quoteIfNeeded(e.id)}\n`;
  };
  const json = (e: AccessEntry) => {
    const line: Record<string, unknown> = { time: timestamp(e.at), level: e.broken ? "warn" : "info" };
    if (tag) line.tag = tag;
    Object.assign(line, { event: "request", method: e.method, path: target(e.url), status: e.status, ms: Number(e.ms.toFixed(1)) });
    if (e.model) line.model = e.model;
    if (e.provider) line.provider = e.provider;
    if (e.route) line.route = e.route;
    if (upstream && e.upstream_ms !== undefined) line.upstream_ms = e.upstream_ms;
    if (e.attempts !== undefined && e.attempts > 1) line.attempts = e.attempts;
    if (e.broken) Object.assign(line, { stream: "broken", reason: e.broken });
    line.id = e.id;
    return `${JSON.stringify(line)}\n`;
  };
  const line = format === "json" ? json : text;
  let pending: AccessEntry[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    let out = "";
    for (const entry of batch) out += line(entry);
    try {
      // A client may send a configured secret in a query (`?code=`): masked once per batch, not per line.
      writeSync(2, maskSecrets(out));
    } catch {
      // stderr closed: nothing useful to do with a log line
    }
  };
  process.on("exit", flush);
  return (entry) => {
    if (pending.length === 0) setTimeout(flush, FLUSH_MS);
    pending.push(entry);
  };
}

/**
 * A client's value (a model, a request id) or a route's name as one `key=value` word: quoted, with
 * JSON's escapes, when it holds a space, a quote, `=` or any control character, so that no value
 * can end the line or forge a field (contract 25).
 */
const quoteIfNeeded = (value: string) => (/[\s"=\x00-\x1f\x7f\u2028\u2029]/.test(value) || value === "" ? JSON.stringify(value) : value);

/** Query parameters whose values are never logged. */
const SECRET_PARAM = /key|token|secret|passw|auth|sig|credential|session/i;

/**
 * Path and query string as the client sent them, with the value of any parameter that looks like
 * a secret masked. A target that is not a path (CONNECT's `host:port`) is shown as it came.
 */
export function target(url: string): string {
  const scheme = url.indexOf("://");
  const start = scheme === -1 ? -1 : url.indexOf("/", scheme + 3);
  if (start === -1) return url;
  const query = url.indexOf("?", start);
  if (query === -1) return url.slice(start);
  const params = url.slice(query + 1).split("&").map((pair) => {
    const eq = pair.indexOf("=");
    const name = eq === -1 ? pair : pair.slice(0, eq);
    return eq !== -1 && SECRET_PARAM.test(safeDecode(name)) ? `${name}=****` : pair;
  });
  return `${url.slice(start, query)}?${params.join("&")}`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
