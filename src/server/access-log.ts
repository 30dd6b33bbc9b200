import { writeSync } from "node:fs";

const FLUSH_MS = 50;

/** What a request leaves for its log line; formatted later, in the batch. Never secrets or content. */
export interface AccessEntry {
  /** Epoch ms when the request arrived. */
  at: number;
  method: string;
  /** The request URL; the path is cut out in the batch. Not the Request: holding those held far more memory. */
  url: string;
  status: number;
  ms: number;
  id: string;
  model?: string;
  provider?: string;
  upstream_ms?: number;
}

export interface AccessLogOptions {
  tag?: string;
  /** Adds the upstream's time to first byte (LOG_LEVEL=debug). */
  upstream?: boolean;
}

/**
 * The request log's writer: one line per request, formatted and written in batches at most 50 ms
 * late (and at exit), so a request pays for an array push, not for string building or a write.
 */
export function createAccessLog({ tag, upstream = false }: AccessLogOptions = {}): (entry: AccessEntry) => void {
  const prefix = tag ? `[${tag}] ` : "";
  // Lines of one second share the ISO prefix; only the milliseconds differ.
  let second = -1;
  let secondText = "";
  const timestamp = (at: number) => {
    const s = Math.floor(at / 1000);
    if (s !== second) [second, secondText] = [s, new Date(s * 1000).toISOString().slice(0, 20)];
    return `${secondText}${String(at % 1000).padStart(3, "0")}Z`;
  };
  const line = (e: AccessEntry) => {
    const start = e.url.indexOf("/", 8);
    const query = e.url.indexOf("?", start);
    const path = query === -1 ? e.url.slice(start) : e.url.slice(start, query);
    let text = `${prefix}${timestamp(e.at)} ${e.method} ${path} ${e.status} ${e.ms.toFixed(1)}ms`;
    if (e.model) text += ` model=${e.model}`;
    if (e.provider) text += ` provider=${e.provider}`;
    if (upstream && e.upstream_ms !== undefined) text += ` upstream_ms=${e.upstream_ms}`;
    return `${text} id=${e.id}\n`;
  };
  let pending: AccessEntry[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    let text = "";
    for (const entry of batch) text += line(entry);
    try {
      writeSync(2, text);
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
