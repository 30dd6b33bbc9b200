import { createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { anthropicEvents, anthropicReply, chunkFrame, converseEvents, converseReply, eventFrame, exceptionFrame, titanEvents, titanReply } from "./fake-bedrock.ts";

/**
 * An upstream that misbehaves on purpose, over raw TCP so it can do what no HTTP server library
 * lets it: reset before or after the headers, stall, lie about lengths. It answers OpenAI-style
 * calls (`POST /v1/chat/completions`) and Bedrock-style ones (`POST /model/{id}/{action}`).
 *
 * The fault is named in the model id, so concurrent calls never race for a script queue:
 * `gpt-fault-html`, `anthropic.fault-es-crc`, `amazon.titan-text-fault-null`, `meta.fault-garbage`
 * (Converse). Any other model gets a correct reply, JSON or streamed as the call asks.
 */

/** Faults every call can get, whatever its style. */
export const HTTP_FAULTS = [
  "reset-before-headers", "reset-after-headers", "reset-before-body", "stall-before-headers", "stall-mid-body", "garbage", "html", "null",
  "wrong-shape", "truncated-json", "empty", "error-500-html", "error-429-odd-retry", "error-400-garbage", "error-401-echo",
  "error-529", "lying-length", "endless",
] as const;
/** OpenAI's server-sent events gone wrong. */
export const SSE_FAULTS = ["sse-no-done", "sse-finish-no-done", "sse-error-event", "sse-garbage-data", "sse-wrong-chunk", "sse-reset-mid", "sse-stall-mid", "sse-comments-only", "sse-html"] as const;
/** AWS event-stream frames gone wrong. */
export const EVENT_STREAM_FAULTS = [
  "es-crc", "es-truncated", "es-huge-length", "es-tiny-length", "es-bad-json", "es-bad-base64", "es-wrong-chunk", "es-exception",
  "es-no-stop", "es-unknown-type", "es-stall-mid", "es-reset-mid", "es-garbage",
] as const;

export type Fault = "ok" | (typeof HTTP_FAULTS)[number] | (typeof SSE_FAULTS)[number] | (typeof EVENT_STREAM_FAULTS)[number];

/** The model ids that ask for a fault, by upstream style. */
export function faultModels(): { openai: string[]; bedrock: string[] } {
  const openai = [...HTTP_FAULTS, ...SSE_FAULTS].map((f) => `gpt-fault-${f}`);
  const bedrock = [...HTTP_FAULTS, ...EVENT_STREAM_FAULTS].flatMap((f) => [`anthropic.fault-${f}`, `amazon.titan-text-fault-${f}`, `meta.fault-${f}`]);
  return { openai, bedrock };
}

interface Call {
  style: "openai" | "bedrock";
  /** anthropic | titan | converse for Bedrock; openai (chat completions) or responses for OpenAI. */
  family: "openai" | "responses" | "anthropic" | "titan" | "converse";
  stream: boolean;
  fault: Fault;
  /** `…fault-wrong-shape-3`: which of a fault's variants. */
  variant: number;
  model: string;
  authorization: string;
}

const CRLF = "\r\n";
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startFaultyUpstream() {
  const sockets = new Set<Socket>();
  const seen = { calls: 0, byFault: new Map<string, number>() };
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    readRequest(socket).then((call) => {
      if (!call) return void socket.destroy();
      seen.calls++;
      seen.byFault.set(call.fault, (seen.byFault.get(call.fault) ?? 0) + 1);
      return answer(socket, call);
    }).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    openaiUrl: `http://127.0.0.1:${port}/v1`,
    bedrockUrl: `http://127.0.0.1:${port}`,
    seen,
    /** Connections still open (a stall the gateway never gave up on stays here). */
    open: () => sockets.size,
    stop() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

export type FaultyUpstream = Awaited<ReturnType<typeof startFaultyUpstream>>;

/** Reads one HTTP/1.1 request (Content-Length or chunked body) and says what it asks for. */
function readRequest(socket: Socket): Promise<Call | undefined> {
  return new Promise((resolve) => {
    let buffer = Buffer.alloc(0);
    const onData = (data: Buffer) => {
      buffer = Buffer.concat([buffer, data]);
      const end = buffer.indexOf("\r\n\r\n");
      if (end === -1) return;
      const head = buffer.subarray(0, end).toString("latin1").split(CRLF);
      const headers = new Map(head.slice(1).map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
      const rest = buffer.subarray(end + 4);
      const body = headers.has("content-length") ? bodyByLength(rest, Number(headers.get("content-length"))) : dechunk(rest);
      if (body === undefined) return;
      socket.off("data", onData);
      const path = head[0]!.split(" ")[1] ?? "";
      resolve(describe(path, body.toString("utf8"), headers.get("authorization") ?? ""));
    };
    socket.on("data", onData);
    socket.on("close", () => resolve(undefined));
  });
}

const bodyByLength = (rest: Buffer, length: number) => (rest.length >= length ? rest.subarray(0, length) : undefined);

function dechunk(rest: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const line = rest.indexOf(CRLF, at);
    if (line === -1) return undefined;
    const size = parseInt(rest.subarray(at, line).toString("latin1"), 16);
    if (size === 0) return Buffer.concat(parts);
    if (rest.length < line + 2 + size + 2) return undefined;
    parts.push(rest.subarray(line + 2, line + 2 + size));
    at = line + 2 + size + 2;
  }
}

function describe(path: string, body: string, authorization: string): Call {
  const bedrock = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream)$/.exec(path);
  if (bedrock) {
    const model = decodeURIComponent(bedrock[1]!);
    const family = /(^|[./])anthropic\./.test(model) ? "anthropic" : /(^|[./])amazon\.titan-text-/.test(model) ? "titan" : "converse";
    return { style: "bedrock", family, stream: bedrock[2]!.endsWith("stream"), fault: faultOf(model), variant: variantOf(model), model, authorization };
  }
  let parsed: { model?: unknown; stream?: unknown } = {};
  try {
    parsed = JSON.parse(body) ?? {};
  } catch {}
  const model = typeof parsed.model === "string" ? parsed.model : "";
  const family = path.endsWith("/responses") ? "responses" : "openai";
  return { style: "openai", family, stream: parsed.stream === true, fault: faultOf(model), variant: variantOf(model), model, authorization };
}

const faultOf = (model: string) => (/fault-([a-z0-9-]+?)(-\d+)?$/.exec(model)?.[1] ?? "ok") as Fault;
const variantOf = (model: string) => Number(/fault-[a-z0-9-]+?-(\d+)$/.exec(model)?.[1] ?? 0);

// ---- answers ----

type Part = string | Uint8Array;

function head(status: number, headers: Record<string, string>): string {
  const lines = [`HTTP/1.1 ${status} ${status === 200 ? "OK" : "Status"}`, "connection: close", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return lines.join(CRLF) + CRLF + CRLF;
}

function sendWhole(socket: Socket, status: number, headers: Record<string, string>, body: Part) {
  const bytes = typeof body === "string" ? Buffer.from(body) : Buffer.from(body);
  socket.end(Buffer.concat([Buffer.from(head(status, { ...headers, "content-length": String(bytes.length) })), bytes]));
}

/** A chunked body sent piece by piece; `then` says how it ends. */
async function sendPieces(socket: Socket, headers: Record<string, string>, pieces: Part[], then: "end" | "reset" | "stall" = "end") {
  socket.write(head(200, { ...headers, "transfer-encoding": "chunked" }));
  for (const piece of pieces) {
    if (socket.destroyed) return;
    const bytes = Buffer.from(piece);
    socket.write(Buffer.concat([Buffer.from(`${bytes.length.toString(16)}${CRLF}`), bytes, Buffer.from(CRLF)]));
    await wait(2);
  }
  if (then === "reset") return void socket.destroy();
  if (then === "stall") return; // until the gateway gives up and closes
  socket.end(`0${CRLF}${CRLF}`);
}

/** Sent at most, so that a gateway without limits still ends the case (and is caught by its RSS). */
const ENDLESS_BYTES = 48 * 1024 * 1024;

/** A 200 whose body never ends (up to ENDLESS_BYTES), until the gateway stops reading and closes. */
async function sendEndless(socket: Socket, headers: Record<string, string>, start: string) {
  socket.write(head(200, { ...headers, "transfer-encoding": "chunked" }));
  const piece = (bytes: Buffer) => Buffer.concat([Buffer.from(`${bytes.length.toString(16)}${CRLF}`), bytes, Buffer.from(CRLF)]);
  socket.write(piece(Buffer.from(start)));
  const block = piece(Buffer.alloc(64 * 1024, 97));
  for (let sent = 0; sent < ENDLESS_BYTES && !socket.destroyed; sent += block.length) {
    // The socket's buffer is full: wait for the gateway to read, or to close.
    if (socket.write(block)) continue;
    await new Promise<void>((done) => {
      const go = () => {
        socket.off("drain", go);
        socket.off("close", go);
        done();
      };
      socket.on("drain", go);
      socket.on("close", go);
    });
  }
  socket.end();
}

const JSON_TYPE = { "content-type": "application/json" };
const SSE_TYPE = { "content-type": "text/event-stream" };
const ES_TYPE = { "content-type": "application/vnd.amazon.eventstream" };

async function answer(socket: Socket, call: Call) {
  const { fault } = call;
  const good = goodReply(call);
  const streamType = call.style === "openai" ? SSE_TYPE : ES_TYPE;
  switch (fault) {
    case "ok":
      return call.stream ? sendPieces(socket, streamType, good.pieces) : sendWhole(socket, 200, JSON_TYPE, good.json);
    case "reset-before-headers":
      return void socket.destroy();
    case "reset-after-headers":
      socket.write(head(200, { ...(call.stream ? streamType : JSON_TYPE), "content-length": "5000" }));
      socket.write(call.stream ? good.pieces[0]! : good.json.slice(0, 10));
      await wait(5);
      return void socket.destroy();
    case "reset-before-body":
      // A 200 and nothing more: a stream that fails before its first byte.
      socket.write(head(200, call.stream ? { ...streamType, "transfer-encoding": "chunked" } : { ...JSON_TYPE, "content-length": "5000" }));
      await wait(5);
      return void socket.destroy();
    case "stall-before-headers":
      return;
    case "stall-mid-body":
      socket.write(head(200, { ...(call.stream ? streamType : JSON_TYPE), "content-length": "5000" }));
      socket.write(call.stream ? good.pieces[0]! : good.json.slice(0, 10));
      return;
    case "lying-length":
      // Says 5000 bytes, sends a whole reply, then closes: a body cut short.
      socket.write(head(200, { ...(call.stream ? streamType : JSON_TYPE), "content-length": "5000" }));
      return void socket.end(call.stream ? Buffer.concat(good.pieces.map((p) => Buffer.from(p))) : good.json);
    case "garbage":
      return sendWhole(socket, 200, call.stream ? streamType : JSON_TYPE, garbage(256));
    case "html":
      return sendWhole(socket, 200, { "content-type": "text/html" }, "<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>");
    case "null":
      return sendWhole(socket, 200, JSON_TYPE, "null");
    case "wrong-shape":
      return sendWhole(socket, 200, JSON_TYPE, JSON.stringify(WRONG_SHAPES[call.variant % WRONG_SHAPES.length]));
    case "truncated-json":
      return sendWhole(socket, 200, JSON_TYPE, good.json.slice(0, Math.floor(good.json.length / 2)));
    case "empty":
      return sendWhole(socket, 200, call.stream ? streamType : JSON_TYPE, "");
    case "error-500-html":
      return sendWhole(socket, 500, { "content-type": "text/html" }, "<html><body>Internal Server Error</body></html>");
    case "error-429-odd-retry":
      return sendWhole(socket, 429, { ...JSON_TYPE, "retry-after": ["abc", "-5", "99999999999", "1e400", ""][Math.floor(Math.random() * 5)]!, ...awsType(call, "ThrottlingException") }, JSON.stringify({ error: { message: "slow down" }, message: "slow down" }));
    case "error-400-garbage":
      return sendWhole(socket, 400, JSON_TYPE, garbage(64));
    case "error-401-echo":
      // An upstream that quotes the credentials it got: parley must not hand them on.
      return sendWhole(socket, 401, { ...JSON_TYPE, ...awsType(call, "UnrecognizedClientException") }, JSON.stringify({ error: { message: `bad key: ${call.authorization}` }, message: `bad key: ${call.authorization}` }));
    case "error-529":
      return sendWhole(socket, 529, JSON_TYPE, JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }));
    case "endless":
      // A JSON reply, or a stream's line, that never ends: parley stops at its limit (contract 25).
      return sendEndless(socket, call.stream ? streamType : JSON_TYPE, call.stream && call.style === "openai" ? 'data: {"id":"' : '{"id":"');
  }
  if (call.style === "openai") return sseFault(socket, call, good.pieces);
  return eventStreamFault(socket, call, good.pieces);
}

const awsType = (call: Call, name: string): Record<string, string> => (call.style === "bedrock" ? { "x-amzn-errortype": `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/` } : {});

const WRONG_SHAPES: unknown[] = [
  {}, [], "text", 42, { choices: "x" }, { choices: [null] }, { choices: [{ message: null }] }, { choices: [{ message: { content: 5, tool_calls: "x" } }] },
  { choices: [{ message: { role: "assistant", content: null, tool_calls: [{ id: 1, function: { name: null, arguments: {} } }] } }] },
  { content: "x" }, { content: [{ type: "tool_use" }] }, { content: [null], usage: "x" }, { results: {} }, { results: [null] }, { results: [{ outputText: 7 }] },
  { output: null }, { output: { message: { content: "x" } } }, { output: { message: { content: [{ toolUse: { name: null } }] } } },
  { __proto__: null, constructor: "x", toString: 1 }, { choices: [{ message: { content: "hi" }, finish_reason: "__proto__" }], usage: { prompt_tokens: "1", completion_tokens: -1 } },
  { content: [{ type: "text", text: "x" }], stop_reason: "constructor", usage: { input_tokens: {}, output_tokens: [] } },
];

function garbage(n: number): Uint8Array {
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i++) bytes[i] = Math.floor(Math.random() * 256);
  return bytes;
}

/** A correct reply for the call: whole JSON, and the pieces of its stream. */
function goodReply(call: Call): { json: string; pieces: Part[] } {
  switch (call.family) {
    case "openai": {
      const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: "chatcmpl-f", object: "chat.completion.chunk", created: 1, model: call.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const json = JSON.stringify({ id: "chatcmpl-f", object: "chat.completion", created: 1, model: call.model, choices: [{ index: 0, message: { role: "assistant", content: "fine" }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } });
      return { json, pieces: [chunk({ role: "assistant", content: "" }), chunk({ content: "fi" }), chunk({ content: "ne" }), chunk({}, "stop"), "data: [DONE]\n\n"] };
    }
    case "responses": {
      const response = (status: string) => ({ id: "resp_f", object: "response", created_at: 1, status, model: call.model, output: status === "completed" ? [{ id: "msg_f", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "fine", annotations: [] }] }] : [], usage: status === "completed" ? { input_tokens: 3, output_tokens: 1, total_tokens: 4 } : null });
      const event = (type: string, n: number, extra: object) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n, ...extra })}\n\n`;
      return {
        json: JSON.stringify(response("completed")),
        pieces: [event("response.created", 0, { response: response("in_progress") }), event("response.output_text.delta", 1, { item_id: "msg_f", output_index: 0, content_index: 0, delta: "fine" }), event("response.completed", 2, { response: response("completed") })],
      };
    }
    case "anthropic":
      return { json: JSON.stringify(anthropicReply()), pieces: anthropicEvents().map(chunkFrame) };
    case "titan":
      return { json: JSON.stringify(titanReply()), pieces: titanEvents().map(chunkFrame) };
    case "converse":
      return { json: JSON.stringify(converseReply()), pieces: converseEvents().map((e) => eventFrame(...(Object.entries(e)[0]! as [string, Record<string, unknown>]))) };
  }
}

function sseFault(socket: Socket, call: Call, pieces: Part[]) {
  const data = (value: unknown) => `data: ${typeof value === "string" ? value : JSON.stringify(value)}\n\n`;
  switch (call.fault) {
    case "sse-no-done":
      return sendPieces(socket, SSE_TYPE, pieces.slice(0, 3));
    case "sse-finish-no-done":
      return sendPieces(socket, SSE_TYPE, pieces.slice(0, 4));
    case "sse-error-event":
      return sendPieces(socket, SSE_TYPE, [...pieces.slice(0, 2), data({ error: { message: "The server had an error", type: "server_error" } })]);
    case "sse-garbage-data":
      return sendPieces(socket, SSE_TYPE, [...pieces.slice(0, 2), "data: {not json\n\n", ...pieces.slice(2)]);
    case "sse-wrong-chunk":
      return sendPieces(socket, SSE_TYPE, [pieces[0]!, data({ choices: "x" }), data({ choices: [{ delta: { content: 5, tool_calls: [{ index: "a", function: null }] } }] }), data(null), data([1]), ...pieces.slice(3)]);
    case "sse-reset-mid":
      return sendPieces(socket, SSE_TYPE, pieces.slice(0, 2), "reset");
    case "sse-stall-mid":
      return sendPieces(socket, SSE_TYPE, pieces.slice(0, 2), "stall");
    case "sse-comments-only":
      return sendPieces(socket, SSE_TYPE, [": keep-alive\n\n", ": still here\n\n"]);
    case "sse-html":
      return sendPieces(socket, SSE_TYPE, ["<html><body>oops</body></html>"]);
    default:
      // An event-stream fault asked of OpenAI: binary frames where text was due.
      return sendPieces(socket, SSE_TYPE, [garbage(128)]);
  }
}

function eventStreamFault(socket: Socket, call: Call, pieces: Part[]) {
  const frames = pieces as Uint8Array[];
  const half = (frame: Uint8Array) => frame.subarray(0, Math.floor(frame.length / 2));
  const prelude = (length: number) => {
    const bytes = new Uint8Array(12);
    new DataView(bytes.buffer).setUint32(0, length);
    return bytes;
  };
  const chunkOf = (payload: string) => eventFrame("chunk", { bytes: Buffer.from(payload).toString("base64") });
  switch (call.fault) {
    case "es-crc": {
      const broken = frames[1]!.slice();
      broken[broken.length - 6]! ^= 0xff;
      return sendPieces(socket, ES_TYPE, [frames[0]!, broken, ...frames.slice(2)]);
    }
    case "es-truncated":
      return sendPieces(socket, ES_TYPE, [frames[0]!, half(frames[1]!)]);
    case "es-huge-length":
      // A prelude that claims a 4 GiB frame, then the connection ends.
      return sendPieces(socket, ES_TYPE, [frames[0]!, prelude(0xffffffff), garbage(64)]);
    case "es-tiny-length":
      return sendPieces(socket, ES_TYPE, [frames[0]!, prelude(2)]);
    case "es-bad-json":
      return sendPieces(socket, ES_TYPE, [frames[0]!, new Uint8Array(eventFrameRaw("chunk", "{not json")), ...frames.slice(1)]);
    case "es-bad-base64":
      return sendPieces(socket, ES_TYPE, [frames[0]!, eventFrame("chunk", { bytes: "%%%not base64%%%" }), chunkOf("{half"), chunkOf("null"), chunkOf("[1,2]"), ...frames.slice(1)]);
    case "es-wrong-chunk":
      return sendPieces(socket, ES_TYPE, [
        frames[0]!, chunkOf(JSON.stringify({ type: "content_block_delta", index: "x", delta: null })), chunkOf(JSON.stringify({ type: "constructor" })),
        eventFrame("contentBlockDelta", { contentBlockIndex: {}, delta: { text: 5, toolUse: null } }), chunkOf(JSON.stringify({ outputText: 9, completionReason: {} })),
        eventFrame("messageStop", { stopReason: "__proto__" }), ...frames.slice(1),
      ]);
    case "es-exception":
      return sendPieces(socket, ES_TYPE, [frames[0]!, exceptionFrame("modelStreamErrorException", "The model stream failed.")]);
    case "es-no-stop":
      return sendPieces(socket, ES_TYPE, frames.slice(0, 2));
    case "es-unknown-type":
      return sendPieces(socket, ES_TYPE, [frames[0]!, eventFrame("__proto__", { x: 1 }), eventFrame("constructor", {}), ...frames.slice(1)]);
    case "es-stall-mid":
      return sendPieces(socket, ES_TYPE, frames.slice(0, 2), "stall");
    case "es-reset-mid":
      return sendPieces(socket, ES_TYPE, frames.slice(0, 2), "reset");
    default:
      // es-garbage, or an SSE fault asked of Bedrock: bytes that are no frame at all.
      return sendPieces(socket, ES_TYPE, [garbage(512)]);
  }
}

/** An event frame whose payload is any text at all (eventFrame takes JSON). */
function eventFrameRaw(type: string, payload: string): Uint8Array {
  const good = eventFrame(type, { x: 1 });
  // Re-encode with the raw payload: same headers, new body and checksums.
  return reencode(good, new TextEncoder().encode(payload));
}

function reencode(frame: Uint8Array, body: Uint8Array): Uint8Array {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const headersLength = view.getUint32(4);
  const headers = frame.subarray(12, 12 + headersLength);
  const total = 12 + headersLength + body.length + 4;
  const out = new Uint8Array(total);
  const o = new DataView(out.buffer);
  o.setUint32(0, total);
  o.setUint32(4, headersLength);
  o.setUint32(8, crc32(out.subarray(0, 8)));
  out.set(headers, 12);
  out.set(body, 12 + headersLength);
  o.setUint32(total - 4, crc32(out.subarray(0, total - 4)));
  return out;
}

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}
