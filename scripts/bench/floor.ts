/**
 * The floor: the least a proxy must do to answer the passthrough JSON path as the contract asks,
 * written as one function, for `ab.ts floor` and `lat.ts floor` to set beside the hop and parley. Over
 * the reference hop it adds the key check (SHA-256, a constant-time compare), the body parsed for its
 * model, the client's abort signal and a first-byte timer on the upstream call, the reply read and
 * parsed for its usage, and a request id and parley's headers on the answer. On `POST /v1/messages`
 * (an Anthropic client to Bedrock Claude, JSON) it also makes the body InvokeModel's (model and stream
 * out, anthropic_version in) and signs the call with SigV4, parley's own signer being the least a
 * signature costs; with a Claude name (`claude-*`) it passes the body to the Anthropic API as sent.
 * Streamed to the Anthropic API (Claude Code's own call), the body is parsed once for `model` and
 * `stream` and forwarded as bytes, the SSE relayed chunk by chunk while its usage is read, and one
 * usage row per request written to SQLite in batches, as contract 12 asks. No routing, fallbacks,
 * metrics or log line: what is left between it and parley is parley's own structure.
 */
import { Database } from "bun:sqlite";
import { timingSafeEqual } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSigner } from "../../src/providers/bedrock/sigv4.ts";

const upstream = process.env.UPSTREAM!;
const KEY = Bun.SHA256.hash(process.env.KEY ?? "sk-bench-key-0123456789") as Uint8Array;
const FIRST_BYTE_MS = 600_000;
const sign = createSigner("us-east-1", "bedrock");
const credentials = { accessKeyId: "AKIABENCH", secretAccessKey: "bench" };
const host = new URL(upstream).host;

/** The key check: SHA-256 and a constant-time compare, as parley's. */
const keyOk = (key: string | null | undefined) => !!key && timingSafeEqual(Bun.SHA256.hash(key) as Uint8Array, KEY);

/** The call's first byte, or an error once FIRST_BYTE_MS has gone by. */
function firstByte(call: Promise<Response>): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("first byte too late")), FIRST_BYTE_MS);
    call.then((r) => (clearTimeout(timer), resolve(r)), (e) => (clearTimeout(timer), reject(e)));
  });
}

/** An Anthropic client's JSON call, as Bedrock's InvokeModel takes it; Claude's own names as the Anthropic API takes them. */
async function messages(request: Request): Promise<Response> {
  if (!keyOk(request.headers.get("x-api-key"))) return new Response(null, { status: 401 });
  const raw = await request.text();
  const { model, stream, ...rest } = JSON.parse(raw) as { model: string; stream?: boolean };
  if (model.startsWith("claude-")) return anthropicApi(request, raw, model, stream === true);
  const body = JSON.stringify({ anthropic_version: "bedrock-2023-05-31", ...rest });
  const path = `/model/${encodeURIComponent(model)}/invoke`;
  const headers = sign(host, path, "application/json", body, credentials);
  const response = await firstByte(fetch(`${upstream}${path}`, { method: "POST", body, signal: request.signal, timeout: FIRST_BYTE_MS, headers }));
  const text = await response.text();
  void (JSON.parse(text) as { usage?: { input_tokens?: number } }).usage?.input_tokens;
  const id = crypto.randomUUID();
  return new Response(text, { headers: { "content-type": "application/json", "x-request-id": id, "request-id": id, "x-parley-model": model, "x-parley-attempts": "1" } });
}

/** The Anthropic API, same family: the body as sent with its key and version, the reply read for its usage. */
async function anthropicApi(request: Request, body: string, model: string, stream: boolean): Promise<Response> {
  const headers = { "content-type": "application/json", "x-api-key": "sk-ant-bench", "anthropic-version": "2023-06-01" };
  const response = await firstByte(fetch(`${upstream}/v1/messages`, { method: "POST", body, signal: request.signal, timeout: FIRST_BYTE_MS, headers }));
  if (stream) return relayed(response, model);
  const text = await response.text();
  void (JSON.parse(text) as { usage?: { input_tokens?: number } }).usage?.input_tokens;
  const id = crypto.randomUUID();
  return new Response(text, { headers: { "content-type": "application/json", "x-request-id": id, "request-id": id, "x-parley-model": model, "x-parley-attempts": "1" } });
}

/** Usage rows, written in one transaction every 100 ms (parley batches its own the same way). */
const db = new Database(join(tmpdir(), `parley-floor-${process.pid}.db`));
db.run("CREATE TABLE IF NOT EXISTS usage (time INTEGER, model TEXT, input_tokens INTEGER, output_tokens INTEGER)");
const insert = db.prepare("INSERT INTO usage VALUES (?, ?, ?, ?)");
let rows: [number, string, number, number][] = [];
const flush = db.transaction((batch: typeof rows) => { for (const row of batch) insert.run(...row); });
setInterval(() => {
  if (rows.length === 0) return;
  const batch = rows;
  rows = [];
  flush(batch);
}, 100);

/** An SSE reply relayed chunk by chunk, its usage read from the events as they pass; one usage row at its end. */
function relayed(response: Response, model: string): Response {
  const decoder = new TextDecoder();
  let input = 0;
  let output = 0;
  const started = Date.now();
  const usage = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      const text = decoder.decode(chunk, { stream: true });
      const inputAt = text.indexOf('"input_tokens":');
      if (inputAt !== -1) input = Number.parseInt(text.slice(inputAt + 15), 10) || input;
      const outputAt = text.lastIndexOf('"output_tokens":');
      if (outputAt !== -1) output = Number.parseInt(text.slice(outputAt + 16), 10) || output;
    },
    flush() {
      rows.push([started, model, input, output]);
    },
  });
  const id = crypto.randomUUID();
  return new Response(response.body!.pipeThrough(usage), { headers: { "content-type": "text/event-stream", "x-request-id": id, "request-id": id, "x-parley-model": model, "x-parley-attempts": "1" } });
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 0),
  idleTimeout: 0,
  async fetch(request) {
    if (new URL(request.url).pathname === "/v1/messages") return messages(request);
    if (!keyOk(/^Bearer\s+(.+)$/i.exec(request.headers.get("authorization") ?? "")?.[1])) return new Response(null, { status: 401 });
    const body = await request.text();
    const model = (JSON.parse(body) as { model?: string }).model ?? "";
    const url = request.url;
    const call = fetch(`${upstream}${url.slice(url.indexOf("/", 8))}`, {
      method: "POST", body, signal: request.signal, timeout: FIRST_BYTE_MS,
      headers: { "content-type": "application/json", authorization: "Bearer sk-upstream" },
    });
    const response = await firstByte(call);
    const text = await response.text();
    const usage = (JSON.parse(text) as { usage?: { prompt_tokens?: number } }).usage;
    void usage?.prompt_tokens;
    return new Response(text, {
      headers: { "content-type": "application/json", "x-request-id": crypto.randomUUID(), "x-parley-model": model, "x-parley-attempts": "1" },
    });
  },
});
// Exit normally on a signal, as the hop does.
process.on("SIGINT", () => process.exit(0));
console.log(`listening ${server.port}`);
