import { writeSync } from "node:fs";

const FLUSH_MS = 50;

/**
 * The request log's writer: one line per request, written in batches at most 50 ms late (and at
 * exit). It bypasses consola, whose per-call formatting cost more than the rest of a proxied request.
 */
export function createAccessLog(tag?: string): (line: string) => void {
  const prefix = tag ? `[${tag}] ` : "";
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const text = pending.join("");
    pending = [];
    try {
      writeSync(2, text);
    } catch {
      // stderr closed: nothing useful to do with a log line
    }
  };
  process.on("exit", flush);
  return (line) => {
    if (pending.length === 0) setTimeout(flush, FLUSH_MS);
    pending.push(`${prefix}${new Date().toISOString()} ${line}\n`);
  };
}
