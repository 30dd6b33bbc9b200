import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEST_KEY } from "../lib/app.ts";
import { startCli, userDir } from "../lib/cli.ts";
import { startS3 } from "../lib/files.ts";

/**
 * Broken, refused and abandoned uploads against a real `parley serve` process on a real socket:
 * each gets its answer (or, for a client that left, none), the process keeps serving, and neither
 * the store nor the cache keeps anything of them.
 */
const MAX = 6 * 1024 * 1024;
const B = "parley-boundary";
const field = (name: string, value: string) => `--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const fileHead = (filename = "a.txt", type = "text/plain", name = "file") =>
  `--${B}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`;
const filePart = (content: string, filename?: string, type?: string) => `${fileHead(filename, type)}${content}\r\n`;
const END = `--${B}--\r\n`;

interface Reply {
  status: number;
  body: string;
}

for (const storage of ["local", "s3"] as const) {
  describe(`failed uploads on the ${storage} store`, () => {
    let s3: Awaited<ReturnType<typeof startS3>> | undefined;
    let server: Awaited<ReturnType<typeof startCli>>;
    let port: number;
    const dataDir = join(mkdtempSync(join(tmpdir(), "parley-upload-")), "data");

    beforeAll(async () => {
      s3 = storage === "s3" ? await startS3() : undefined;
      const { env } = userDir();
      server = await startCli([], { env: { ...env, ...s3?.env, API_KEY: TEST_KEY, PARLEY_DATA_DIR: dataDir, MAX_UPLOAD_BYTES: String(MAX), LOG_LEVEL: "info" } });
      port = Number(new URL(server.url).port);
    });
    afterAll(async () => {
      await server?.stop();
      await s3?.stop();
    });

    /** Every file the store holds, staged or complete, read from disk (s3rver keeps its objects as files too). */
    const stored = () => {
      const dir = storage === "local" ? join(dataDir, "files") : join(s3!.directory, "parley-test");
      try {
        return readdirSync(dir, { recursive: true }).map(String).filter((name) => name.includes("file-")).sort();
      } catch {
        return [];
      }
    };
    const cacheRows = () => {
      if (!existsSync(join(dataDir, "parley.db"))) return 0;
      const db = new Database(join(dataDir, "parley.db"), { readonly: true });
      try {
        return db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM files").get()!.n;
      } finally {
        db.close();
      }
    };

    /** Sends bytes on a fresh connection; `abort` closes it mid-request instead of waiting for an answer. */
    function send(head: string, body: (string | Buffer)[], options: { abort?: boolean } = {}): Promise<Reply | undefined> {
      return new Promise((resolve) => {
        let received = "";
        const socket = connect(port, "127.0.0.1", async () => {
          socket.write(`${head}\r\n`);
          for (const piece of body) {
            if (socket.destroyed) break;
            if (!socket.write(piece)) await new Promise((r) => socket.once("drain", r));
          }
          if (options.abort) setTimeout(() => socket.destroy(), 50);
        });
        socket.on("data", (data) => (received += data.toString("latin1")));
        socket.on("error", () => undefined);
        socket.on("close", () => resolve(options.abort ? undefined : parse(received)));
      });
    }
    const headers = (length: number | "chunked", type = `multipart/form-data; boundary=${B}`) =>
      [
        "POST /v1/files HTTP/1.1",
        "Host: 127.0.0.1",
        `Authorization: Bearer ${TEST_KEY}`,
        `Content-Type: ${type}`,
        "Connection: close",
        length === "chunked" ? "Transfer-Encoding: chunked" : `Content-Length: ${length}`,
        "",
      ].join("\r\n");
    const post = (body: string, options: { length?: number; abort?: boolean; type?: string } = {}) =>
      send(headers(options.length ?? Buffer.byteLength(body), options.type), [body], options);
    /** The body in 64 KiB chunks of chunked transfer encoding. */
    const postChunked = (body: string) => {
      const pieces: string[] = [];
      for (let at = 0; at < body.length; at += 65536) {
        const piece = body.slice(at, at + 65536);
        pieces.push(`${piece.length.toString(16)}\r\n${piece}\r\n`);
      }
      return send(headers("chunked"), [...pieces, "0\r\n\r\n"]);
    };

    /** Runs one failing upload and checks the answer, that the server lives on, and that nothing was kept. */
    async function expectNothingKept(run: () => Promise<Reply | undefined>, expected: { status: number; type?: string } | "no answer") {
      const before = { stored: stored(), rows: cacheRows() };
      const left = () => server.output().match(/POST \/v1\/files 499 /g)?.length ?? 0;
      const leftBefore = left();
      const reply = await run();
      if (expected === "no answer") expect(reply).toBeUndefined();
      else {
        expect(reply?.status).toBe(expected.status);
        if (expected.type) expect(JSON.parse(reply!.body).error.type).toBe(expected.type);
      }
      // The client may be gone before the server has noticed: its log line (499) says it has.
      // Then give the store time to clean up, however slow the machine.
      const deadline = Date.now() + 10_000;
      while (!reply && left() === leftBefore && Date.now() < deadline) await Bun.sleep(20);
      while ((stored().length !== before.stored.length || cacheRows() !== before.rows) && Date.now() < deadline) await Bun.sleep(20);
      expect(server.proc.exitCode).toBeNull();
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
      expect(stored()).toEqual(before.stored);
      expect(cacheRows()).toBe(before.rows);
    }

    test("a good upload is kept: the checks below can see a file", async () => {
      const before = stored().length;
      const reply = await post(field("purpose", "assistants") + filePart("hello") + END);
      expect(reply?.status).toBe(200);
      expect(stored().length).toBeGreaterThan(before);
      expect(cacheRows()).toBe(1);
    });

    const invalid = { status: 400, type: "invalid_request_error" };
    for (const purposeFirst of [true, false]) {
      const order = purposeFirst ? "purpose first" : "file first";
      const form = (file: string, purpose = "assistants") => (purposeFirst ? field("purpose", purpose) + file : file + field("purpose", purpose));

      test(`${order}: a form that ends without its closing boundary is 400`, async () => {
        const body = form(filePart("hello"));
        await expectNothingKept(() => post(body), invalid);
      });

      test(`${order}: a form that ends inside the file is 400`, async () => {
        const body = purposeFirst ? field("purpose", "assistants") + fileHead() + "hel" : fileHead() + "hel";
        await expectNothingKept(() => post(body), invalid);
      });

      test(`${order}: a client that leaves in the middle of the file gets nothing, and nothing is kept`, async () => {
        const body = (purposeFirst ? field("purpose", "assistants") : "") + fileHead() + "x".repeat(100_000);
        await expectNothingKept(() => post(body, { length: 1_000_000, abort: true }), "no answer");
      });

      test(`${order}: a client that leaves after several MiB (an S3 multipart upload) gets nothing, and nothing is kept`, async () => {
        const body = (purposeFirst ? field("purpose", "assistants") : "") + fileHead() + "x".repeat(5_500_000);
        await expectNothingKept(() => post(body, { length: MAX, abort: true }), "no answer");
      });

      test(`${order}: a chunked upload over MAX_UPLOAD_BYTES is 413`, async () => {
        await expectNothingKept(() => postChunked(form(filePart("x".repeat(MAX + 10_000))) + END), { status: 413, type: "invalid_request_error" });
      });

      test(`${order}: a chunked upload far over the request size limit is 413`, async () => {
        await expectNothingKept(() => postChunked(form(filePart("x".repeat(MAX + 2 * 1024 * 1024))) + END), { status: 413 });
      });

      test(`${order}: an empty file is 400`, async () => {
        await expectNothingKept(() => post(form(filePart("")) + END), invalid);
      });

      test(`${order}: an unsupported type is 400`, async () => {
        await expectNothingKept(() => post(form(filePart("PNG", "cat.png", "image/png")) + END), invalid);
      });

      test(`${order}: two file parts are 400`, async () => {
        await expectNothingKept(() => post(form(filePart("one") + filePart("two", "b.txt")) + END), invalid);
      });

      for (const purpose of ["", "memes"]) {
        test(`${order}: purpose '${purpose}' is 422`, async () => {
          await expectNothingKept(() => post(form(filePart("hello"), purpose) + END), { status: 422, type: "validation_error" });
        });
      }

      test(`${order}: purpose sent twice is 400`, async () => {
        await expectNothingKept(() => post(form(filePart("hello")) + field("purpose", "batch") + END), invalid);
      });
    }

    test("a file first and no purpose at all is 400", async () => {
      await expectNothingKept(() => post(filePart("hello") + END), invalid);
    });

    test("a file, then a form that breaks in the purpose part, is 400", async () => {
      await expectNothingKept(() => post(`${filePart("hello")}--${B}\r\nContent-Disposition: form-data; name="purp`), invalid);
    });

    test("multipart without a boundary is 400", async () => {
      await expectNothingKept(() => post("garbage", { type: "multipart/form-data" }), invalid);
    });

    test("garbage under a boundary is 400", async () => {
      await expectNothingKept(() => post("garbage, not a form\r\n"), invalid);
      await expectNothingKept(() => post(`--${B}\r\nno headers here\r\n\r\n--${B}--\r\n`), invalid);
    });
  });
}

/** An HTTP/1.1 response, with a chunked body decoded. */
function parse(raw: string): Reply | undefined {
  const split = raw.indexOf("\r\n\r\n");
  if (split < 0) return undefined;
  const head = raw.slice(0, split);
  let body = raw.slice(split + 4);
  if (/^transfer-encoding:\s*chunked/im.test(head)) {
    let decoded = "";
    for (;;) {
      const line = body.indexOf("\r\n");
      const size = Number.parseInt(body.slice(0, line), 16);
      if (!size) break;
      decoded += body.slice(line + 2, line + 2 + size);
      body = body.slice(line + 2 + size + 2);
    }
    body = decoded;
  }
  return { status: Number(head.split(" ")[1]), body: Buffer.from(body, "latin1").toString("utf8") };
}
