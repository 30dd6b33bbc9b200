/**
 * Peak memory of `parley serve` while a large file streams in: `bun scripts/upload-memory.ts [MiB]`.
 * Starts parley in its own process (local store, temporary dirs), streams a generated multipart body
 * of the given size (default 1024 MiB) and samples the server's resident memory from /proc.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { rssMb } from "../test/lib/proc.ts";

const mib = Number(process.argv[2] ?? 1024);
const size = mib * 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), "parley-upload-"));
const key = "sk-bench-upload-0123456789";
const cli = resolve(import.meta.dir, "../src/cli.ts");

const server = Bun.spawn(["bun", "--no-env-file", cli, "serve", "--port", "0", "--log-level", "info"], {
  env: { ...process.env, HOME: dir, PARLEY_DATA_DIR: join(dir, "data"), PARLEY_CONFIG_DIR: join(dir, "config"), API_KEY: key, MAX_UPLOAD_BYTES: String(size + 1) },
  stderr: "pipe",
  stdout: "ignore",
});
const url = await listening(server.stderr);
const rss = () => rssMb(server.pid);

const idle = rss();
let peak = idle;
const sampler = setInterval(() => (peak = Math.max(peak, rss())), 20);

const boundary = "----parley-bench";
const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`);
const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
const chunk = new Uint8Array(256 * 1024).fill(97);
let sent = 0;
const body = new ReadableStream<Uint8Array>({
  start(controller) {
    controller.enqueue(head);
  },
  pull(controller) {
    if (sent >= size) {
      controller.enqueue(tail);
      return controller.close();
    }
    const part = chunk.subarray(0, Math.min(chunk.length, size - sent));
    sent += part.length;
    controller.enqueue(part);
  },
});

const started = performance.now();
const response = await fetch(`${url}/v1/files`, {
  method: "POST",
  body,
  headers: { authorization: `Bearer ${key}`, "content-type": `multipart/form-data; boundary=${boundary}` },
  // @ts-expect-error Bun streams request bodies with duplex: "half"
  duplex: "half",
});
const seconds = (performance.now() - started) / 1000;
clearInterval(sampler);
const reply = await response.json();

console.log(`upload of ${mib} MiB: status ${response.status}, ${reply.bytes ?? "?"} bytes stored, ${seconds.toFixed(1)} s (${(mib / seconds).toFixed(0)} MiB/s)`);
console.log(`server RSS: idle ${idle.toFixed(0)} MB, peak during upload ${peak.toFixed(0)} MB, growth ${(peak - idle).toFixed(0)} MB`);

server.kill();
await server.exited;
rmSync(dir, { recursive: true, force: true });
if (response.status !== 200 || reply.bytes !== size) process.exit(1);

async function listening(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  for await (const part of stream) {
    text += new TextDecoder().decode(part);
    const match = /listening on (http:\/\/\S+)/.exec(text);
    if (match) return match[1]!;
  }
  throw new Error(`parley did not start: ${text}`);
}
