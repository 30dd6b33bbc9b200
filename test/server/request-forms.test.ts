import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import type { AccessEntry } from "../../src/server/access-log.ts";
import { REQUEST_ID } from "../../src/server/edge/pipeline.ts";
import { RequestLog } from "../../src/server/request-log.ts";
import { TEST_KEY } from "../lib/app.ts";
import { userDir } from "../lib/cli.ts";
import { serve } from "./serve-process.ts";

const MAX_UPLOAD_BYTES = 1000;
/** MAX_UPLOAD_BYTES and 1 MiB of multipart framing. */
const LIMIT = MAX_UPLOAD_BYTES + 1024 * 1024;

let server: Awaited<ReturnType<typeof serve>>;
let port: number;
beforeAll(async () => {
  const u = userDir();
  server = await serve(["--port", "0"], { cwd: u.dir, env: { ...u.env, API_KEY: TEST_KEY, MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES) } });
  port = Number(new URL(server.ready.url).port);
});
afterAll(() => server.stop());

/** Whether `text` holds one whole response: its head and as much body as its Content-Length says. */
function complete(text: string): boolean {
  const [headers, body = ""] = text.split("\r\n\r\n", 2);
  const length = /content-length: (\d+)/i.exec(headers ?? "")?.[1];
  return length !== undefined && Buffer.byteLength(body) >= Number(length);
}

/** Sends bytes as they are over a fresh TCP connection; resolves with everything read until close or `ms`. */
function rawRequest(head: string, ms = 10_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let out = "";
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(out);
    };
    const timer = setTimeout(done, ms);
    socket.on("data", (data) => {
      out += data;
      // One whole response is enough.
      if (complete(out)) done();
    });
    socket.on("close", done);
    socket.on("error", done);
    socket.write(head);
  });
}

function parseRaw(text: string) {
  const [head = "", body = ""] = text.split("\r\n\r\n", 2);
  const [statusLine = "", ...headerLines] = head.split("\r\n");
  const headers = new Map(headerLines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
  return { status: Number(statusLine.split(" ")[1]), headers, body };
}

function expectEnvelope(text: string, status: number, type: string) {
  const response = parseRaw(text);
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toContain("application/json");
  expect(response.headers.get(REQUEST_ID)).toBeTruthy();
  const body = JSON.parse(response.body);
  expect(body.error.type).toBe(type);
  return body.error as { type: string; message: string };
}

describe("request forms over a raw socket", () => {
  test("CONNECT, to any target, is a 405 envelope, never Bun's error page", async () => {
    for (const target of ["example.com:443", `127.0.0.1:${port}`, "/v1/models"]) {
      const text = await rawRequest(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
      expect(text).not.toContain("<html");
      expect(expectEnvelope(text, 405, "invalid_request_error").message).toContain("CONNECT");
    }
  });

  test("an absolute-form target is served as its path: the envelope without a key, the reply with one", async () => {
    expectEnvelope(await rawRequest("GET http://example.com/v1/models HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"), 401, "authentication_error");
    const ok = parseRaw(await rawRequest(`GET http://example.com/v1/models HTTP/1.1\r\nHost: example.com\r\nAuthorization: Bearer ${TEST_KEY}\r\nConnection: close\r\n\r\n`));
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body).object).toBe("list");
    expectEnvelope(await rawRequest("GET http://example.com/nowhere HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"), 404, "not_found_error");
  });

  test("methods no route takes are a 405 envelope on known paths, a 404 elsewhere", async () => {
    for (const method of ["TRACE", "PROPFIND", "QUERY", "PATCH", "PUT", "MKCOL"]) {
      expectEnvelope(await rawRequest(`${method} /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`), 405, "invalid_request_error");
      expectEnvelope(await rawRequest(`${method} /no/such/path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`), 404, "not_found_error");
    }
  });

  test("a method Bun's parser does not know is refused without a page or a trace, and the server goes on", async () => {
    const text = await rawRequest("FROBNICATE /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(text).not.toContain("<html");
    expect(text).not.toContain("at ");
    expect((await fetch(`${server.ready.url}/health`)).status).toBe(200);
  });
});

describe("bodies over the limit get the envelope", () => {
  const headers = { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" };
  /** A body sent chunked (no Content-Length), `total` bytes in 64 KiB pieces. */
  const chunked = (total: number) => {
    const piece = new Uint8Array(64 * 1024).fill(0x20);
    let sent = 0;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) return controller.close();
        const part = piece.subarray(0, Math.min(piece.length, total - sent));
        sent += part.length;
        controller.enqueue(part);
      },
    });
  };

  const expect413 = async (response: Response) => {
    expect(response.status).toBe(413);
    expect(response.headers.get(REQUEST_ID)).toBeTruthy();
    const body = await response.json();
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain(String(LIMIT));
  };

  test("with a Content-Length, on every route", async () => {
    for (const path of ["/v1/chat/completions", "/v1/files", "/v1/models", "/nowhere"]) {
      await expect413(await fetch(`${server.ready.url}${path}`, { method: "POST", headers, body: new Uint8Array(LIMIT + 1) }));
    }
  });

  test("chunked, to the chat and the files endpoints", async () => {
    await expect413(await fetch(`${server.ready.url}/v1/chat/completions`, { method: "POST", headers, body: chunked(3 * LIMIT), duplex: "half" } as RequestInit));
    const multipart = { ...headers, "content-type": "multipart/form-data; boundary=xyz" };
    await expect413(await fetch(`${server.ready.url}/v1/files`, { method: "POST", headers: multipart, body: chunked(3 * LIMIT), duplex: "half" } as RequestInit));
  });

  test("a body at the limit is read (and judged on its content)", async () => {
    const response = await fetch(`${server.ready.url}/v1/chat/completions`, { method: "POST", headers, body: chunked(LIMIT), duplex: "half" } as RequestInit);
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toContain("empty");
  });

  test("a client pushing 1 GiB, chunked or declared, gets the envelope; the server's memory does not grow with it", async () => {
    const GiB = 1024 ** 3;
    const chat = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\n`;
    const declared = await push(`${chat}Content-Length: ${GiB}\r\n\r\n`, GiB, false);
    expectEnvelope(declared.response, 413, "invalid_request_error");
    const streamed = await push(`${chat}Transfer-Encoding: chunked\r\n\r\n`, GiB, true);
    expectEnvelope(streamed.response, 413, "invalid_request_error");
    // The client really sent it all: the server drained what it did not need.
    expect(declared.sent + streamed.sent).toBe(2 * GiB);
    const peakMiB = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.proc.pid}/status`, "utf8"))?.[1]) / 1024;
    expect(peakMiB).toBeLessThan(200);
  }, 120_000); // 2 GiB through both processes: 3 s alone, 22 s on a busy machine
});

/** Writes the head, then `total` body bytes whatever the server answers; resolves with the answer and the bytes sent. */
function push(head: string, total: number, chunked: boolean): Promise<{ response: string; sent: number }> {
  const piece = Buffer.alloc(1024 * 1024, 0x20);
  const frame = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")]) : piece;
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let response = "";
    let sent = 0;
    let out = false;
    const finish = () => {
      socket.destroy();
      resolve({ response, sent });
    };
    socket.on("data", (data) => {
      response += data;
      if (out && complete(response)) finish();
    });
    socket.on("error", finish);
    socket.on("close", finish);
    socket.write(head);
    const pump = () => {
      while (sent < total) {
        sent += piece.length;
        if (!socket.write(frame)) return void socket.once("drain", pump);
      }
      if (chunked) socket.write("0\r\n\r\n");
      // Everything is out: close once the whole answer is in (or the server closes), however long it takes.
      out = true;
      if (complete(response)) finish();
    };
    pump();
  });
}

describe("the request log", () => {
  test("keeps the query string and masks parameters that look like secrets", async () => {
    await fetch(`${server.ready.url}/v1/models?beta=true&target_format=beta_messages&api_key=sk-query-secret-1&token=tok-query-secret-2&X-Amz-Signature=sig-3`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    await server.waitFor(/GET \/v1\/models\?beta=true/);
    const line = server.stderr().split("\n").find((l) => l.includes("GET /v1/models?beta=true"))!;
    expect(line).toContain("?beta=true&target_format=beta_messages&api_key=****&token=****&X-Amz-Signature=****");
    for (const secret of ["sk-query-secret-1", "tok-query-secret-2", "sig-3"]) expect(server.stderr()).not.toContain(secret);
  });

  test("a megabyte model id is logged as its first 200 characters and its length", async () => {
    const model = `mock/${"m".repeat(1024 * 1024)}`;
    const headers = { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" };
    const body = JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] });
    expect((await fetch(`${server.ready.url}/v1/chat/completions`, { method: "POST", headers, body })).status).toBe(200);
    await server.waitFor(/characters\)" provider=mock/);
    const line = server.stderr().split("\n").find((l) => l.includes(`(${model.length} characters)`))!;
    expect(line).toContain(` model=${JSON.stringify(`${model.slice(0, 200)}…(${model.length} characters)`)} provider=mock id=`);
    expect(line.length).toBeLessThan(400);
  });

  test("a model name with a line break cannot forge a log line (contract 25)", async () => {
    const model = "mock\n2026-01-01T00:00:00.000Z POST /v1/admin 200 1.0ms model=forged id=x";
    const headers = { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" };
    const body = JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] });
    await fetch(`${server.ready.url}/v1/chat/completions`, { method: "POST", headers, body });
    await server.waitFor(/model="mock\\n2026/);
    expect(server.stderr().split("\n").some((l) => l.startsWith("2026-01-01T00:00:00.000Z POST /v1/admin"))).toBe(false);
  });

  test("a CONNECT's line shows its target, not a broken path", async () => {
    await rawRequest(`CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`);
    await server.waitFor(/CONNECT example\.com:443 405 /);
  });

  test("a stream noted as broken after its line was written gets a second line with the same id", () => {
    const entries: AccessEntry[] = [];
    const log = new RequestLog((entry) => entries.push(entry), "POST", "http://localhost/v1/chat/completions", "req-1");
    log.note({ model: "gpt-4o-mini", provider: "alpha" });
    log.finish(200);
    log.note({ broken: "the upstream dropped the connection mid-stream" });
    log.finish(200);
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({ status: 200, id: "req-1", model: "gpt-4o-mini", broken: undefined });
    expect(entries[1]).toMatchObject({ status: 200, id: "req-1", model: "gpt-4o-mini", broken: "the upstream dropped the connection mid-stream" });
    expect(entries[1]!.ms).toBeGreaterThanOrEqual(entries[0]!.ms);
  });
});
