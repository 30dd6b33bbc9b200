/**
 * A test suite that asks a real model through parley, with no keys and no network in CI: parley
 * answers from the cassettes committed beside this file (`cassettes/default.har`).
 *
 *   CI (replay, the default):   bun test examples/cassette-ci
 *   On a laptop, to (re)record:  PARLEY_CASSETTE_MODE=record ALPHA_API_KEY=sk-… bun test examples/cassette-ci
 *
 * PARLEY_BIN picks a built binary; without it, this checkout's source runs.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const KEY = "sk-cassette-ci-0123456789";
const CASSETTES = resolve(import.meta.dir, "cassettes");
const PARLEY = process.env.PARLEY_BIN ? [resolve(process.env.PARLEY_BIN)] : ["bun", "--no-env-file", resolve(import.meta.dir, "../../src/cli.ts")];

let server: Bun.Subprocess<"ignore", "pipe", "inherit"> | undefined;
let url: string;

beforeAll(async () => {
  const home = mkdtempSync(join(tmpdir(), "parley-cassette-ci-"));
  server = Bun.spawn([...PARLEY, "serve", "--port", "0", "--cassettes", CASSETTES], {
    // PARLEY_CASSETTE_MODE (replay unless set) and the upstream keys, when recording, come from the environment.
    env: { ...process.env, HOME: home, PARLEY_CONFIG_DIR: join(home, "config"), PARLEY_DATA_DIR: join(home, "data"), API_KEY: KEY, MODELS_REFRESH_S: "0", LOG_LEVEL: "warn" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  url = await readyUrl(server.stdout);
});

afterAll(async () => {
  server?.kill();
  await server?.exited;
});

const ask = (body: object) =>
  fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-parley-cassette": "default" },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "What is the capital of France? One sentence." }], ...body }),
  });

test("a question, answered by the model as it answered when recorded", async () => {
  const response = await ask({});
  expect(response.status).toBe(200);
  const reply = (await response.json()) as any;
  expect(reply.choices[0].message.content).toContain("Paris");
  expect(reply.usage.total_tokens).toBeGreaterThan(0);
});

test("the same question streamed: the recorded chunks, then [DONE]", async () => {
  const response = await ask({ stream: true });
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  const events = (await response.text()).split("\n\n").filter((block) => block.startsWith("data: ")).map((block) => block.slice(6));
  expect(events.at(-1)).toBe("[DONE]");
  const text = events.slice(0, -1).map((data) => JSON.parse(data).choices[0]?.delta?.content ?? "").join("");
  expect(text).toContain("Paris");
});

/** Reads stdout until parley's `{"event":"ready",…}` line. */
async function readyUrl(stdout: ReadableStream<Uint8Array>): Promise<string> {
  let buffered = "";
  const decoder = new TextDecoder();
  for await (const chunk of stdout) {
    buffered += decoder.decode(chunk, { stream: true });
    const lines = buffered.split("\n");
    buffered = lines.pop()!;
    for (const line of lines) {
      try {
        const event = JSON.parse(line) as { event?: string; url?: string };
        if (event.event === "ready" && event.url) return event.url;
      } catch {} // not JSON: not the ready line
    }
  }
  throw new Error("parley serve exited before it was ready");
}
