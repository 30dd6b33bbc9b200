/**
 * `bun scripts/bench/inproc.ts [DIR] [--path json|stream|messages] [--n 200000]`: parley's own JS work per request, in
 * process and without a network: the app's handler is called in a loop with upstream calls answered
 * at once by a stand-in `fetch` (the bench upstream's replies), and a minimal handler doing the
 * contract's least work beside it. Steadier than wrk on a shared machine (a few %), so it shows a
 * change of 1 µs; wrk and /proc (ab.ts) stay the measure of what a client sees.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { EventStreamCodec } from "@smithy/core/event-streams";

const { values, positionals } = parseArgs({ args: Bun.argv.slice(2), allowPositionals: true, options: { path: { type: "string", default: "json" }, n: { type: "string", default: "200000" } } });
const root = resolve(positionals[0] ?? join(import.meta.dir, "../.."));
const { loadConfig } = await import(join(root, "src/config.ts"));
const { createLogger } = await import(join(root, "src/log.ts"));
const { createApp } = await import(join(root, "src/server/app.ts"));
const { createAccessLog } = await import(join(root, "src/server/access-log.ts"));

const completion = JSON.stringify({
  id: "chatcmpl-bench", object: "chat.completion", created: 1, model: "gpt-4o-mini",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello from the bench upstream." }, finish_reason: "stop" }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
});
const sse = ["", ...Array.from({ length: 50 }, (_, i) => `tok${i} `)].map((content) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`).join("")
  + `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: ${JSON.stringify({ id: "c", choices: [], usage: { prompt_tokens: 12, completion_tokens: 50 } })}\n\ndata: [DONE]\n\n`;
const anthropic = JSON.stringify({ id: "msg_bench", type: "message", role: "assistant", model: "claude", content: [{ type: "text", text: "Hello" }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 12, output_tokens: 7 } });
const sseBytes = new TextEncoder().encode(sse);
const codec = new EventStreamCodec((b) => new TextDecoder().decode(b), (t) => new TextEncoder().encode(t));
const frame = (event: object) => codec.encode({
  headers: { ":event-type": { type: "string", value: "chunk" }, ":content-type": { type: "string", value: "application/json" }, ":message-type": { type: "string", value: "event" } },
  body: new TextEncoder().encode(JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString("base64") })),
});
const bedrockStream = Buffer.concat([
  frame({ type: "message_start", message: { id: "msg_bench", type: "message", role: "assistant", content: [], usage: { input_tokens: 12, output_tokens: 1 } } }),
  frame({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
  ...Array.from({ length: 50 }, (_, i) => frame({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: `tok${i} ` } })),
  frame({ type: "content_block_stop", index: 0 }),
  frame({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 50 } }),
  frame({ type: "message_stop" }),
]);
globalThis.fetch = (async (url: string, init: RequestInit) => {
  if (typeof init.body === "string") void init.body.length;
  if (url.endsWith("/invoke-with-response-stream")) return new Response(bedrockStream, { headers: { "content-type": "application/vnd.amazon.eventstream" } });
  if (url.endsWith("/invoke")) return new Response(anthropic, { headers: { "content-type": "application/json" } });
  if (url.endsWith("/chat/completions") && typeof init.body === "string" && init.body.includes('"stream":true')) return new Response(sseBytes, { headers: { "content-type": "text/event-stream" } });
  return new Response(completion, { headers: { "content-type": "application/json" } });
}) as typeof fetch;

const dir = mkdtempSync(join(tmpdir(), "parley-inproc-"));
const KEY = "sk-bench-key-0123456789";
const config = loadConfig({
  env: {
    HOME: dir, PARLEY_DATA_DIR: join(dir, "data"), PARLEY_CONFIG_DIR: join(dir, "config"), API_KEY: KEY, LOG_LEVEL: process.env.LOG_LEVEL ?? "info", MODELS_REFRESH_S: "0",
    ALPHA_API_KEY: "sk-up", ALPHA_BASE_URL: "http://upstream.invalid/v1", BETA_REGION: "us-east-1", BETA_ACCESS_KEY_ID: "AKIABENCH", BETA_SECRET_ACCESS_KEY: "bench",
    BETA_ENDPOINT_URL: "http://upstream.invalid", BETA_CONTROL_ENDPOINT_URL: "http://upstream.invalid", RATE_LIMIT_RPM: "0", ...process.env.INPROC_ENV ? JSON.parse(process.env.INPROC_ENV) : {},
  },
  cwd: dir,
}).config;
// Log lines are formatted as the server formats them, and written to /dev/null.
const devnull = Bun.file("/dev/null").writer();
const accessLog = config.logLevel === "info" ? createAccessLog({}) : undefined;
const app = createApp({ config, log: createLogger("warn"), ...(accessLog ? { accessLog } : {}) });
void devnull;

const CLAUDE = "anthropic.claude-3-5-haiku-20241022-v1:0";
const hello = [{ role: "user", content: "Say hello" }];
/** A request as a client sends it, with its content-length (a Request made in JS has none). */
const post = (path: string, headers: Record<string, string>, body: object) => {
  const text = JSON.stringify(body);
  return () => new Request(`http://127.0.0.1${path}`, { method: "POST", headers: { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) }, body: text });
};
const requests: Record<string, () => Request> = {
  json: post("/v1/chat/completions", { authorization: `Bearer ${KEY}` }, { model: "gpt-4o-mini", messages: hello, max_tokens: 50 }),
  stream: post("/v1/chat/completions", { authorization: `Bearer ${KEY}` }, { model: "gpt-4o-mini", stream: true, messages: hello, max_tokens: 50 }),
  messages: post("/v1/messages", { "x-api-key": KEY, "anthropic-version": "2023-06-01" }, { model: CLAUDE, max_tokens: 50, messages: hello }),
  "messages-stream": post("/v1/messages", { "x-api-key": KEY, "anthropic-version": "2023-06-01" }, { model: CLAUDE, max_tokens: 50, stream: true, messages: hello }),
};
const make = requests[values.path!]!;
const n = Number(values.n);

async function run(handle: (r: Request) => Promise<Response>, count: number) {
  const requests = Array.from({ length: 64 }, make);
  for (let i = 0; i < count; i++) {
    const response = await handle(i < 64 ? requests[i]! : make());
    if (response.status !== 200) throw new Error(`status ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  }
}
const timed = async (handle: (r: Request) => Promise<Response>) => {
  const start = performance.now();
  await run(handle, n);
  return ((performance.now() - start) * 1000) / n;
};
// The least a proxy does: read the body, call, return the reply.
const hop = async (request: Request) => fetch("http://upstream.invalid/v1/chat/completions", { method: "POST", body: await request.text(), headers: { "content-type": "application/json" } });

await run(app.handle, 20000);
await run(hop, 20000);
const results: string[] = [];
for (let round = 0; round < 3; round++) {
  const h = await timed(hop);
  const p = await timed(app.handle);
  results.push(`hop ${h.toFixed(2)} µs, parley ${p.toFixed(2)} µs, parley's own ${(p - h).toFixed(2)} µs`);
}
console.log(`${root} · path ${values.path} · ${n} requests a round\n  ${results.join("\n  ")}`);
await app.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
