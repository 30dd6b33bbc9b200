import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startGateway, TEST_KEY } from "../lib/gateway.ts";
import { runCli, userDir, watchCli } from "../lib/cli.ts";

// `parley chat` with a question, spawned the way a script runs it: no terminal anywhere.
const gateway = await startGateway();
const url = gateway.listen();
const user = userDir();
const SERVER = ["--server-url", url, "--api-key", TEST_KEY, "--model", "gpt-4o-mini"];
const run = (args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) =>
  runCli(["chat", ...args], { cwd: user.dir, env: { ...user.env, ...options.env }, stdin: options.stdin });

beforeEach(() => gateway.reset());
afterAll(() => gateway.stop());

const userText = () => gateway.openai.last().body.messages.at(-1).content;

describe("parley chat with a question", () => {
  test("-p streams the answer's text to stdout and exits 0", async () => {
    const { stdout, stderr, code } = await run(["-p", "What is 2+2?", ...SERVER]);
    expect({ stdout, stderr, code }).toEqual({ stdout: "Hello from OpenAI\n", stderr: "", code: 0 });
    expect(gateway.openai.last().body).toMatchObject({ model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content: "What is 2+2?" }] });
  });

  test("the question may be an argument, or come on stdin", async () => {
    expect((await run(["Name a colour", ...SERVER])).code).toBe(0);
    expect(userText()).toBe("Name a colour");
    const piped = await run(SERVER, { stdin: "Summarise this\nin one line\n" });
    expect(piped.stdout).toBe("Hello from OpenAI\n");
    expect(userText()).toBe("Summarise this\nin one line");
  });

  test("the key and the model default to API_KEY and DEFAULT_ALPHA_MODEL", async () => {
    const { code } = await run(["-p", "hi", "--server-url", url], { env: { API_KEY: TEST_KEY, DEFAULT_ALPHA_MODEL: "gpt-4.1-mini" } });
    expect(code).toBe(0);
    expect(gateway.openai.last().body.model).toBe("gpt-4.1-mini");
    expect(gateway.openai.last().headers.get("authorization")).toBe("Bearer sk-upstream-openai-key");
  });

  test("text is written as it arrives, not when the reply is complete", async () => {
    gateway.openai.next({ kind: "stream", chunks: ["first", " second"], gapMs: 800 });
    const cli = watchCli(["chat", "-p", "hi", ...SERVER], { cwd: user.dir, env: user.env });
    await cli.waitFor("first");
    expect(cli.proc.exitCode).toBeNull();
    expect(cli.stdout()).not.toContain("second");
    expect(await cli.done()).toEqual({ stdout: "first second\n", stderr: "", code: 0 });
  });

  test("--system sends a system message before the question", async () => {
    await run(["-p", "Bonjour?", "--system", "Answer in French.", ...SERVER]);
    expect(gateway.openai.last().body.messages).toEqual([
      { role: "system", content: "Answer in French." },
      { role: "user", content: "Bonjour?" },
    ]);
  });

  test("--json prints one object with text, model, finish reason, usage and tool calls", async () => {
    gateway.openai.next({ kind: "reply", toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' }] });
    const { stdout, code } = await run(["-p", "Weather in Paris?", "--json", ...SERVER]);
    expect(code).toBe(0);
    expect(stdout.trim().split("\n")).toHaveLength(1);
    expect(JSON.parse(stdout)).toEqual({
      text: "",
      model: "gpt-4o-mini",
      finish_reason: "tool_calls",
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
      tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
    });
  });

  test("streamed tool calls are named on stderr, since plain text cannot show them", async () => {
    gateway.openai.next({ kind: "stream", chunks: [], toolCalls: [{ id: "call_1", name: "get_weather", arguments: ['{"city"', ':"Paris"}'] }] });
    const { stdout, stderr, code } = await run(["-p", "Weather?", ...SERVER]);
    expect(code).toBe(0);
    expect(stdout).toBe("");
    expect(stderr).toContain("get_weather");
    expect(stderr).toContain("--json");
  });

  test("--file uploads each file, sends them as file_ids, and deletes them afterwards", async () => {
    const notes = join(user.dir, "notes.txt");
    const table = join(user.dir, "table.csv");
    writeFileSync(notes, "The launch is on Tuesday.");
    writeFileSync(table, "name,qty\napple,3\n");
    const { stdout, code } = await run(["-p", "When is the launch?", "--file", notes, `--file=${table}`, ...SERVER]);
    expect(code).toBe(0);
    expect(stdout).toBe("Hello from OpenAI\n");
    const sent = userText();
    expect(sent).toContain("=== Attached files (2) ===");
    expect(sent).toContain("--- File: notes.txt ---");
    expect(sent).toContain("The launch is on Tuesday.");
    expect(sent).toContain("--- File: table.csv ---");
    expect(sent).toEndWith("When is the launch?");
    const files = (await (await gateway.call("/v1/files")).json()) as { data: unknown[] };
    expect(files.data).toEqual([]);
  });

  test("a request the server refuses: its message on one stderr line, exit 1", async () => {
    const { stdout, stderr, code } = await run(["-p", "hi", ...SERVER, "--api-key", "sk-wrong-key"]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toContain("401");
    expect(stderr).toContain("Invalid API key");
  });

  test("an upstream failure: the gateway's status and message, exit 1", async () => {
    const failure = { kind: "error", status: 503, message: "The engine is currently overloaded." } as const;
    gateway.openai.next(failure, failure, failure); // enough for any retries
    const { stderr, code } = await run(["-p", "hi", ...SERVER]);
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toMatch(/^parley: 5\d\d /);
  });

  test("an error in the middle of the stream: the text so far, then the message and exit 1", async () => {
    gateway.openai.next({ kind: "stream", errorAfter: 2 });
    const { stdout, stderr, code } = await run(["-p", "hi", ...SERVER]);
    expect(code).toBe(1);
    expect(stdout).toBe("Hello");
    expect(stderr).toContain("The server had an error while processing your request.");
    expect(stderr.trim().split("\n")).toHaveLength(1);
  });

  test("no server listening: says so, exit 1", async () => {
    const { stderr, code } = await run(["-p", "hi", ...SERVER, "--server-url", "http://127.0.0.1:9"]);
    expect(code).toBe(1);
    expect(stderr).toContain("cannot reach parley at http://127.0.0.1:9");
  });

  test("no terminal and no question: one line saying what to do, exit 2, no stack trace", async () => {
    for (const stdin of [undefined, "", "  \n"]) {
      const { stdout, stderr, code } = await run(SERVER, { stdin });
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expect(stderr.trim().split("\n")).toHaveLength(1);
      expect(stderr).toContain('parley chat -p "question"');
      expect(stderr).not.toContain("Raw mode");
    }
    expect(gateway.openai.received).toHaveLength(0);
  });

  test("without --model or DEFAULT_ALPHA_MODEL, the first model the server lists answers", async () => {
    const { stdout, code } = await run(["-p", "hi", "--json", "--server-url", url, "--api-key", TEST_KEY]);
    expect(code).toBe(0);
    const first = (await (await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).json()).data[0].id;
    expect(JSON.parse(stdout).model).toBeTruthy();
    expect(gateway.openai.last().body.model).toBe(first);
  });

  test("usage mistakes exit 2 before anything is sent", async () => {
    const noFile = await run(["-p", "hi", "--file", join(user.dir, "missing.txt"), ...SERVER]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain("missing.txt");
    const twice = await run(["-p", "hi", "also this", ...SERVER]);
    expect(twice.code).toBe(2);
    expect(gateway.openai.received).toHaveLength(0);
  });
});
