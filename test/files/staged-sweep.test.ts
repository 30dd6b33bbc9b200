import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TEST_KEY } from "../lib/app.ts";
import { userDir } from "../lib/cli.ts";
import { eventually, serve } from "../server/serve-process.ts";

// Unfinished uploads (`<id>.<pid>.part`) of a server that was killed are swept when a server starts
// on the same data directory; those of a live one (another gateway, another worker) are left alone.
const user = userDir();
const env = { ...user.env, API_KEY: TEST_KEY, LOG_LEVEL: "info" };
const filesDir = join(user.dir, ".data", "parley", "files");
mkdirSync(filesDir, { recursive: true });
const parts = () => readdirSync(filesDir).filter((n) => n.endsWith(".part")).sort();
const running: { stop(): Promise<number> }[] = [];
afterAll(() => Promise.all(running.map((s) => s.stop())));

async function start(args: string[] = []) {
  const server = await serve(["--port", "0", ...args], { cwd: user.dir, env });
  running.push(server);
  return server;
}

/** A multipart upload whose file arrives in two halves: the second when `finish` is called. */
function slowUpload(url: string) {
  let finish = () => {};
  const boundary = "sweep-boundary";
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\n`;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(new TextEncoder().encode(`${head}${"first half ".repeat(2000)}`));
      await new Promise<void>((resolve) => (finish = resolve));
      controller.enqueue(new TextEncoder().encode(`second half\r\n--${boundary}--\r\n`));
      controller.close();
    },
  });
  const response = fetch(`${url}/v1/files`, {
    method: "POST", body, duplex: "half",
    headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": `multipart/form-data; boundary=${boundary}` },
  } as RequestInit);
  return { response, finish: () => finish() };
}

describe("unfinished uploads left by a killed server", () => {
  test("are swept at the next start; an upload in flight on a live gateway sharing the directory is not", async () => {
    // A gateway that stays up, and one killed mid-upload, which leaves its part behind.
    const live = await start();
    const killed = await start();
    const cut = slowUpload(killed.ready.url);
    const cutOff = cut.response.catch(() => undefined);
    const [left] = await eventually(parts, (names) => names.length === 1);
    expect(left).toContain(`.${killed.ready.pid}.part`);
    killed.proc.kill("SIGKILL");
    await killed.proc.exited;
    await cutOff;
    // An older parley's part, from before this start, and a live gateway's upload in flight.
    const older = "file-000000000000000000000000.part";
    writeFileSync(join(filesDir, older), "old");
    utimesSync(join(filesDir, older), new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    const inFlight = slowUpload(live.ready.url);
    const [ongoing] = await eventually(() => parts().filter((n) => n.includes(`.${live.ready.pid}.`)), (names) => names.length === 1);
    expect(parts()).toEqual([left!, older, ongoing!].sort());

    // A second gateway on the same directory, with two workers.
    const next = await start(["--workers", "2"]);
    await next.waitFor(/removed 2 unfinished upload\(s\) left by a server that was killed/);
    expect(parts()).toEqual([ongoing!]);
    inFlight.finish();
    const uploaded = await (await inFlight.response).json();
    expect(uploaded).toMatchObject({ object: "file", filename: "notes.txt", purpose: "assistants" });
    expect(parts()).toEqual([]);
  }, 60_000);
});
