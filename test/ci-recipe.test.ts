/**
 * docs/ci.md's test, as a user would copy it: start `parley serve --port 0`
 * against the built-in mock provider (no provider keys), wait for its ready line, then try a chat,
 * a stream and a tool call over plain HTTP. PARLEY_BIN picks a built binary; without it, this
 * checkout's source runs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const KEY = "sk-ci-recipe-0123456789";
const PARLEY = process.env.PARLEY_BIN ? [resolve(process.env.PARLEY_BIN)] : ["bun", "--no-env-file", resolve(import.meta.dir, "../src/cli.ts")];

let server: Bun.Subprocess<"ignore", "pipe", "inherit"> | undefined;
let url: string;

/** Reads stdout line by line until `{"event":"ready",…}`; human log lines go to stderr. */
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

const chat = (body: object) =>
  fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("parley in CI, against the mock provider", () => {
  beforeAll(async () => {
    const home = mkdtempSync(join(tmpdir(), "parley-ci-"));
    server = Bun.spawn([...PARLEY, "serve", "--port", "0"], {
      env: { ...process.env, HOME: home, PARLEY_CONFIG_DIR: join(home, "config"), PARLEY_DATA_DIR: join(home, "data"), API_KEY: KEY },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "inherit",
    });
    const timeout = setTimeout(() => server?.kill(), 15_000);
    url = await readyUrl(server.stdout);
    clearTimeout(timeout);
  });

  afterAll(async () => {
    server?.kill();
    await server?.exited;
  });

  test("a chat: the mock echoes the question", async () => {
    const response = await chat({ model: "mock", messages: [{ role: "user", content: "ping from CI" }] });
    expect(response.status).toBe(200);
    const reply = (await response.json()) as any;
    expect(reply.choices[0].message.content).toContain("ping from CI");
    expect(reply.choices[0].finish_reason).toBe("stop");
    expect(reply.usage.total_tokens).toBeGreaterThan(0);
  });

  test("a stream: text deltas, then data: [DONE]", async () => {
    const response = await chat({ model: "mock", stream: true, messages: [{ role: "user", content: "stream this" }] });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const events = (await response.text()).split("\n\n").filter((block) => block.startsWith("data: ")).map((block) => block.slice(6));
    expect(events.at(-1)).toBe("[DONE]");
    const text = events.slice(0, -1).map((data) => JSON.parse(data).choices[0]?.delta?.content ?? "").join("");
    expect(text).toContain("stream this");
  });

  test("a tool call: mock/tools calls the first tool offered", async () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
    const response = await chat({ model: "mock/tools", tools, messages: [{ role: "user", content: "Weather in Paris?" }] });
    const reply = (await response.json()) as any;
    expect(reply.choices[0].finish_reason).toBe("tool_calls");
    expect(reply.choices[0].message.tool_calls[0].function.name).toBe("get_weather");
  });
});
