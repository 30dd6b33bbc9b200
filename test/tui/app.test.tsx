import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { render } from "ink-testing-library";
import { App } from "../../tui/app.tsx";
import { createClient } from "../../tui/client.ts";
import { openStore } from "../../tui/store.ts";
import { startGateway, TEST_KEY } from "../lib/gateway.ts";

const gateway = await startGateway({ RATE_LIMIT_RPM: "0", UPSTREAM_RETRIES: "0" });
const url = gateway.listen();
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const ENTER = "\r";
const ESC = "\x1b";
const DOWN = "\x1b[B";

function open(options: { key?: string; model?: string; clipboard?: (text: string) => void } = {}) {
  const cwd = mkdtempSync(join(tmpdir(), "parley-tui-"));
  const client = createClient(url, options.key ?? TEST_KEY);
  const store = openStore(join(cwd, "data"));
  const app = render(<App client={client} store={store} serverUrl={url} model={options.model ?? "gpt-4o"} cwd={cwd} size={{ columns: 80, rows: 24 }} color={false} clipboard={options.clipboard} />);
  const frame = () => app.lastFrame() ?? "";
  const until = async (check: (frame: string) => boolean, what: string, ms = 10_000) => {
    const deadline = Date.now() + ms;
    while (!check(frame())) {
      if (Date.now() > deadline) throw new Error(`never saw ${what}; screen:\n${frame()}`);
      await Bun.sleep(10);
    }
  };
  const type = async (text: string) => {
    app.stdin.write(text);
    await Bun.sleep(30);
  };
  const say = async (text: string) => {
    await type(text);
    await type(ENTER);
  };
  return { app, frame, until, type, say, cwd };
}

describe("chatting", () => {
  test("a question, and the reply streaming in token by token, then time and usage", async () => {
    gateway.openai.next({ kind: "stream", chunks: ["The ", "answer ", "is ", "forty-two."], gapMs: 120 });
    const ui = open();
    await ui.say("What is the answer?");
    await ui.until((f) => f.includes("› What is the answer?"), "the question");
    await ui.until((f) => f.includes("The answer is forty-two."), "the whole reply");
    // Every frame Ink drew is kept: one showed part of the reply while it was still coming.
    const partial = ui.app.frames.find((f) => f.includes("The answer") && !f.includes("forty-two."));
    expect(partial).toContain("gpt-4o is answering");
    await ui.until((f) => /gpt-4o · \d+\.\ds · 11 → 7 tokens/.test(f), "time and usage");
    // gpt-4o at $2.50 / $10 per million tokens: 11 in and 7 out cost $0.0000975, as the server priced it.
    await ui.until((f) => /11 → 7 tokens · \$0\.00009[78] this chat/.test(f), "the conversation's cost in the status line");
    expect(gateway.openai.last().headers.get("x-parley-tag")).toBeNull();
    expect(gateway.openai.last().body).toMatchObject({ model: "gpt-4o", stream: true, messages: [{ role: "user", content: "What is the answer?" }] });
  });

  test("the token line says how much of the input the upstream read from its prompt cache", async () => {
    gateway.openai.next({ kind: "stream", chunks: ["Cached."], usage: [2400, 9, 2048] });
    const ui = open();
    await ui.say("Again");
    await ui.until((f) => /gpt-4o · \d+\.\ds · 2400 → 9 tokens \(2048 cached\)/.test(f), "the cache reads on the token line");
  });

  test("the conversation so far goes with each new question", async () => {
    const ui = open();
    await ui.say("First");
    await ui.until((f) => f.includes("Hello from OpenAI"), "the first reply");
    await ui.say("Second");
    await ui.until(() => gateway.openai.received.length === 2, "the second request");
    expect(gateway.openai.last().body.messages).toEqual([
      { role: "user", content: "First" }, { role: "assistant", content: "Hello from OpenAI" }, { role: "user", content: "Second" },
    ]);
  });

  test("Alt+Enter and Ctrl+J add a new line instead of sending", async () => {
    const ui = open();
    await ui.type("line one");
    await ui.type("\x1b\r");
    await ui.type("line two\nline three");
    // Ctrl+J on its own, as a terminal sends it when typed alone.
    await ui.type("\n");
    await ui.type("line four");
    expect(gateway.openai.received).toHaveLength(0);
    await ui.type(ENTER);
    await ui.until(() => gateway.openai.received.length === 1, "the request");
    expect(gateway.openai.last().body.messages[0].content).toBe("line one\nline two\nline three\nline four");
  });

  test("Esc cancels a reply in progress and aborts the request", async () => {
    gateway.openai.next({ kind: "stream", chunks: Array.from({ length: 40 }, (_, i) => `w${i} `), gapMs: 100 });
    const ui = open();
    await ui.say("Talk for a while");
    await ui.until((f) => f.includes("w1"), "the reply starting");
    await ui.type(ESC);
    await ui.until((f) => f.includes("cancelled after"), "the cancellation");
    await ui.until(() => gateway.openai.state.cancelled > 0, "the upstream being cancelled");
    expect(ui.frame()).not.toContain("w39");
  });

  test("Markdown code blocks are set off in a gutter", async () => {
    gateway.openai.next({ kind: "reply", text: "Here:\n```ts\nconst x = 1;\n```\nDone." });
    const ui = open();
    await ui.say("/settings");
    await ui.type(DOWN);
    await ui.type(DOWN);
    await ui.type(DOWN);
    await ui.type(ENTER);
    await ui.type(ESC);
    await ui.until((f) => f.includes("Enter send"), "the chat again");
    await ui.say("code please");
    await ui.until((f) => f.includes("│ const x = 1;"), "the code block");
    expect(ui.frame()).toContain("┌── ts");
  });
});

test("PgUp and PgDn scroll through a transcript longer than the screen", async () => {
  gateway.openai.next({ kind: "reply", text: Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n") });
  const ui = open();
  await ui.say("a long answer please");
  await ui.until((f) => f.includes("line 39"), "the end of the reply");
  expect(ui.frame()).not.toContain("› a long answer please");
  await ui.type("\x1b[5~");
  await ui.type("\x1b[5~");
  await ui.until((f) => f.includes("› a long answer please") && !f.includes("line 39"), "the top of the transcript");
  expect(ui.frame()).toContain("scrolled up");
  await ui.type("\x1b[6~");
  await ui.type("\x1b[6~");
  await ui.until((f) => f.includes("line 39"), "the bottom again");
});

describe("slash commands", () => {
  test("/model <name> switches the model for the next request", async () => {
    const ui = open();
    await ui.say("/model gpt-4o-mini");
    await ui.until((f) => f.includes("parley · gpt-4o-mini"), "the new model in the header");
    await ui.say("hi");
    await ui.until(() => gateway.openai.received.length === 1, "the request");
    expect(gateway.openai.last().body.model).toBe("gpt-4o-mini");
  });

  test("/model without a name opens a picker from /v1/models", async () => {
    const ui = open();
    await ui.say("/model");
    await ui.until((f) => f.includes("Pick a model"), "the picker");
    expect(ui.frame()).toContain("gpt-4o-mini");
    await Bun.sleep(100); // Ink listens for keys from an effect that runs just after the first frame
    await ui.type(DOWN);
    await ui.until((f) => f.includes("❯ gpt-4o-mini"), "the highlight on the next model");
    await ui.type(ENTER);
    await ui.until((f) => f.includes("parley · gpt-4o-mini"), "the picked model");
  });

  test("the model picker shows the upstream beside each model; typing an upstream's name lists its models", async () => {
    const ui = open();
    await ui.say("/model");
    await ui.until((f) => f.includes("Pick a model"), "the picker");
    expect(ui.frame()).toMatch(/❯ gpt-4o +alpha {2}\(current\)/);
    expect(ui.frame()).toMatch(/^ {2}gpt-4o-mini +alpha$/m);
    await Bun.sleep(100); // Ink listens for keys from an effect that runs just after the first frame
    await ui.type("beta");
    await ui.until((f) => f.includes("filter: beta"), "the filter");
    const listed = ui.frame().split("\n").filter((line) => /^(❯| ) \S/.test(line));
    expect(listed.length).toBeGreaterThan(0);
    for (const line of listed) expect(line).toMatch(/^(❯| ) \S+ +beta$/);
  });

  test("typing in the model picker filters the list; Enter takes the first match", async () => {
    const ui = open();
    await ui.say("/model");
    await ui.until((f) => f.includes("Pick a model"), "the picker");
    await Bun.sleep(100); // Ink listens for keys from an effect that runs just after the first frame
    await ui.type("4.1-m");
    await ui.until((f) => f.includes("filter: 4.1-m"), "the filter");
    expect(ui.frame()).not.toContain("gpt-4o-mini");
    expect(ui.frame()).toContain("❯ gpt-4.1-mini");
    await ui.type(ENTER);
    await ui.until((f) => f.includes("parley · gpt-4.1-mini"), "the picked model");
  });

  test("/settings changes temperature, max tokens, system prompt and streaming", async () => {
    const ui = open();
    await ui.say("/settings");
    await ui.until((f) => f.includes("Temperature"), "the settings");
    await ui.type(ENTER);
    await ui.type("5");
    await ui.type(ENTER);
    await ui.until((f) => f.includes("Temperature is a number from 0 to 2."), "the validation message");
    await ui.type("\x7f");
    await ui.type("0.4");
    await ui.type(ENTER);
    await ui.type(DOWN);
    await ui.type(ENTER);
    await ui.type("64");
    await ui.type(ENTER);
    await ui.type(DOWN);
    await ui.type(ENTER);
    await ui.type("Be terse.");
    await ui.type(ENTER);
    await ui.type(DOWN);
    await ui.type(ENTER);
    await ui.until((f) => /Streaming\s+off/.test(f), "streaming off");
    await ui.type(ESC);
    await ui.say("hi");
    await ui.until((f) => f.includes("Hello from OpenAI"), "the reply");
    expect(gateway.openai.last().body).toMatchObject({ temperature: 0.4, max_tokens: 64, messages: [{ role: "system", content: "Be terse." }, { role: "user", content: "hi" }] });
    expect(gateway.openai.last().body.stream).toBeUndefined();
  });

  test("/save writes Markdown, or JSON for .json, and asks before overwriting", async () => {
    const ui = open();
    await ui.say("hello");
    await ui.until((f) => f.includes("Hello from OpenAI"), "the reply");
    await ui.say("/save talk.md");
    await ui.until((f) => f.includes("Saved to"), "the saved note");
    const markdown = readFileSync(join(ui.cwd, "talk.md"), "utf8");
    expect(markdown).toContain("## You\n\nhello");
    expect(markdown).toContain("## Assistant\n\nHello from OpenAI");
    await ui.say("/save talk.json");
    await ui.until(() => existsSync(join(ui.cwd, "talk.json")), "the JSON file");
    expect(JSON.parse(readFileSync(join(ui.cwd, "talk.json"), "utf8")).messages).toEqual([{ role: "user", content: "hello" }, { role: "assistant", content: "Hello from OpenAI" }]);
    writeFileSync(join(ui.cwd, "talk.md"), "precious");
    await ui.say("/save talk.md");
    await ui.until((f) => f.includes("exists. Overwrite it? (y/N)"), "the confirmation");
    await ui.type("n");
    await ui.until((f) => f.includes("Not saved."), "the refusal");
    expect(readFileSync(join(ui.cwd, "talk.md"), "utf8")).toBe("precious");
    await ui.say("/save talk.md");
    await ui.until((f) => f.includes("Overwrite it?"), "the confirmation again");
    await ui.type("y");
    await ui.until(() => readFileSync(join(ui.cwd, "talk.md"), "utf8").includes("## You"), "the overwrite");
  });

  test("/help lists the commands, /clear empties the transcript", async () => {
    const ui = open();
    await ui.say("/help");
    await ui.until((f) => f.includes("/save <file>") && f.includes("/exit"), "the help");
    await ui.say("/clear");
    await ui.until((f) => !f.includes("/save <file>"), "an empty transcript");
  });

  test("an unknown command shows a hint and sends nothing", async () => {
    const ui = open();
    await ui.say("/frobnicate now");
    await ui.until((f) => f.includes("Unknown command /frobnicate"), "the hint");
    expect(gateway.openai.received).toHaveLength(0);
  });
});

describe("errors appear as a line, and the chat goes on", () => {
  const cases: [string, () => void, { key?: string; model?: string }, RegExp][] = [
    ["401", () => {}, { key: "sk-wrong" }, /✖ 401 authentication_error: Invalid API key/],
    ["404 model", () => {}, { model: "no-such-model" }, /✖ 404 not_found_error: The model 'no-such-model'/],
    ["429", () => gateway.openai.next({ kind: "error", status: 429, message: "slow down" }), {}, /✖ 429 rate_limit_error/],
    ["503", () => gateway.openai.next({ kind: "error", status: 500, message: "boom" }), {}, /✖ 503 service_unavailable_error/],
    ["a broken stream", () => gateway.openai.next({ kind: "stream", chunks: ["partial ", "reply"], errorAfter: 2, gapMs: 20 }), {}, /partial\nincomplete\n\n✖ server_error: The server had an error/],
  ];
  for (const [name, script, options, line] of cases) {
    test(name, async () => {
      script();
      const ui = open(options);
      await ui.say("hi");
      await ui.until((f) => line.test(f), name);
      await ui.say("/help");
      await ui.until((f) => f.includes("/save <file>"), "the app still answering");
    });
  }
});

describe("turns that fail or stop, and the editor", () => {
  test("a reply cancelled before any text leaves its prompt out of the next request", async () => {
    gateway.openai.next({ kind: "stream", chunks: ["late"], firstByteMs: 2000 });
    const ui = open();
    await ui.say("never mind");
    await ui.until((f) => f.includes("waiting for the first token from gpt-4o"), "the request");
    await ui.type(ESC);
    await ui.until((f) => f.includes("cancelled after") && f.includes("not part of the conversation"), "the cancellation");
    await ui.say("next");
    await ui.until(() => gateway.openai.last().body.messages.at(-1).content === "next", "the next request");
    expect(gateway.openai.last().body.messages).toEqual([{ role: "user", content: "next" }]);
  });

  test("keys that arrive in one chunk with text are still keys: Ctrl+A, Ctrl+E, Ctrl+W, Enter", async () => {
    const ui = open();
    await ui.type("world\x01hello \x05!! oops\x17\x08\r");
    await ui.until(() => gateway.openai.received.length === 1, "the request");
    expect(gateway.openai.last().body.messages[0].content).toBe("hello world!!");
  });

  test("Esc asks before clearing the draft; a second Esc clears it, Ctrl+Z brings it back", async () => {
    const ui = open();
    await ui.type("a draft");
    await ui.until((f) => f.includes("> a draft"), "the draft");
    await ui.type(ESC);
    await ui.until((f) => f.includes("Esc again clears the draft"), "the question");
    expect(ui.app.lastFrame()).toContain("> a draft");
    await ui.type(ESC);
    await ui.until((f) => !f.includes("> a draft") && f.includes("Draft cleared"), "the draft gone");
    await ui.type("\x1a");
    await ui.until((f) => f.includes("> a draft"), "the draft back");
    expect(gateway.openai.received).toHaveLength(0);
  });

  test("/copy hands the last reply, or its n-th code block, to the clipboard", async () => {
    const copied: string[] = [];
    gateway.openai.next({ kind: "stream", chunks: ["Try:\n```js\nf()\n```\n"] });
    const ui = open({ clipboard: (text) => copied.push(text) });
    await ui.say("/copy");
    await ui.until((f) => f.includes("No reply to copy yet."), "nothing to copy");
    await ui.say("code?");
    await ui.until((f) => f.includes("│ f()"), "the reply");
    await ui.say("/copy 1");
    await ui.until(() => copied.length === 1, "the copy");
    await ui.say("/copy");
    await ui.until(() => copied.length === 2, "the second copy");
    expect(copied).toEqual(["f()", "Try:\n```js\nf()\n```\n"]);
    await ui.say("/copy x");
    await ui.until((f) => f.includes("The last reply has code blocks 1 to 1."), "the refusal");
  });

  test("/settings with a name and value: bad names and values are refused, nothing changes", async () => {
    const ui = open();
    await ui.say("/settings colour blue");
    await ui.until((f) => f.includes('Unknown setting "colour"'), "the unknown name");
    await ui.say("/settings max_tokens -3");
    await ui.until((f) => f.includes("Max tokens is a positive whole number. Nothing was changed."), "the bad value");
    await ui.say("/settings stream maybe");
    await ui.until((f) => f.includes("Streaming is on or off."), "the bad switch");
    await ui.say("hi");
    await ui.until(() => gateway.openai.received.length === 1, "the request");
    expect(gateway.openai.last().body.max_tokens).toBeUndefined();
    expect(gateway.openai.last().body.stream).toBe(true);
  });

  test("commands typed faster than the screen redraws all count (a busy machine, or a paste)", async () => {
    const ui = open();
    await ui.type("/model gpt-4o-mini\r/settings temperature 0.3\r/settings system Answer in French.\rbonjour\r");
    await ui.until(() => gateway.openai.received.length === 1, "the request");
    expect(gateway.openai.last().body).toMatchObject({
      model: "gpt-4o-mini", temperature: 0.3, messages: [{ role: "system", content: "Answer in French." }, { role: "user", content: "bonjour" }],
    });
  });
});
