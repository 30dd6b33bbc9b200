import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { defineCommand } from "citty";
import type { Har, HarEntry } from "../cassettes/har.ts";
import { exitUsage } from "./fail.ts";

interface Row {
  cassette: string;
  method: string;
  upstream: string;
  kind: string;
  model: string | null;
  path: string;
  status: number;
  /** The reply's bytes; `chunks` when it was a stream. */
  size: number;
  chunks?: number;
  error?: string;
}

/** `parley cassettes DIR`: what each cassette holds, one line per recorded upstream call. */
export default defineCommand({
  meta: { name: "cassettes", description: "List the upstream calls recorded in a directory of cassettes (serve --cassettes): method, upstream, model, status, size" },
  args: {
    dir: { type: "positional", description: "the cassettes directory", required: true },
    json: { type: "boolean", description: "print JSON: [{cassette, method, upstream, kind, model, path, status, size, chunks?, error?}]" },
  },
  run: ({ args }) => {
    const dir = String(args.dir);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) exitUsage(`${dir}: no such directory`);
    const files = readdirSync(dir).filter((name) => name.endsWith(".har")).sort();
    const rows = files.flatMap((name) => entriesOf(join(dir, name)).map((entry) => rowOf(name.slice(0, -4), entry)));
    if (args.json) return void process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    if (rows.length === 0) return void process.stdout.write(`no recordings in ${dir}\n`);
    process.stdout.write(table(rows));
  },
});

function entriesOf(file: string): HarEntry[] {
  try {
    const har = JSON.parse(readFileSync(file, "utf8")) as Har;
    const entries = har?.log?.entries;
    // Each entry as parley writes them: a request with a URL and a method, a response with a status and content.
    if (Array.isArray(entries) && entries.every((e) => typeof e?.request?.method === "string" && URL.canParse(e?.request?.url) && typeof e?.response?.status === "number" && typeof e?.response?.content === "object")) return entries;
  } catch {} // reported below
  return exitUsage(`${file} is not a HAR file parley wrote (each entry needs request.method, request.url, response.status and response.content)`);
}

function rowOf(cassette: string, entry: HarEntry): Row {
  const { request, response } = entry;
  const path = new URL(request.url).pathname;
  const { content } = response;
  return {
    cassette,
    method: request.method,
    upstream: entry._upstream,
    kind: entry._kind,
    model: modelOf(request.postData?.text, path),
    path,
    status: response.status,
    size: content.size,
    ...(content._chunks ? { chunks: content._chunks.length } : {}),
    ...(response._error ? { error: `${response._error.name}: ${response._error.message}` } : {}),
  };
}

/** The body's `model`, else Bedrock's model in the path (`/model/<id>/converse`). */
function modelOf(body: string | undefined, path: string): string | null {
  try {
    const model = body ? (JSON.parse(body) as { model?: unknown }).model : undefined;
    if (typeof model === "string") return model;
  } catch {} // not JSON: the path may still say
  const inPath = /\/model\/([^/]+)\//.exec(path)?.[1];
  return inPath ? decodeURIComponent(inPath) : null;
}

function table(rows: Row[]): string {
  const cells = rows.map((r) => [
    r.cassette,
    r.method,
    `${r.upstream} (${r.kind})`,
    r.model ?? "-",
    r.status === 0 ? `failed: ${r.error ?? "no reply"}` : String(r.status),
    `${r.size} B${r.chunks !== undefined ? ` in ${r.chunks} chunk(s)` : ""}`,
    r.path,
  ]);
  const head = ["CASSETTE", "METHOD", "UPSTREAM", "MODEL", "STATUS", "SIZE", "PATH"];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((cell, i) => (i === c.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ");
  return `${[head, ...cells].map(line).join("\n")}\n`;
}
