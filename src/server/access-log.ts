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
  const line = (e: AccessEntry) => {
    const path = e.url.slice(e.url.indexOf("/", 8)).split("?")[0];
    let text = `${prefix}${new Date(e.at).toISOString()} ${e.method} ${path} ${e.status} ${e.ms.toFixed(1)}ms`;
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
    try {
      writeSync(2, batch.map(line).join(""));
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
