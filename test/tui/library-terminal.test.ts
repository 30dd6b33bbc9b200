import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TEST_KEY } from "../lib/gateway.ts";
import { terminalSuite } from "./tmux.ts";

// Attachments through the files API, /copy with OSC 52, /save + /new + /load, /history and --resume,
// Markdown and NO_COLOR, in a real terminal.
const { hasTmux, gateway, url, terminal } = await terminalSuite();

const lastUserText = () => (gateway.openai.last().body.messages as { role: string; content: string }[]).findLast((m) => m.role === "user")!.content;

test.skipIf(!hasTmux)("/attach uploads and sends file_ids with the next message; /files attaches one the server has", async () => {
  const { t, dir } = await terminal.chat(url, TEST_KEY);
  writeFileSync(join(dir, "notes.txt"), "The launch code is 4242.");
  try {
    await t.text("/attach notes.txt");
    await t.keys("Enter");
    await t.until((s) => /Attached notes\.txt \(file-\w{24}\)/.test(s), "the upload");
    await t.until((s) => s.includes("+ notes.txt · goes with your next message"), "the attachment above the input");
    await t.text("what is the code?");
    await t.keys("Enter");
    await t.until(() => gateway.openai.received.length === 1, "the request");
    expect(lastUserText()).toContain("--- File: notes.txt ---");
    expect(lastUserText()).toContain("The launch code is 4242.");
    expect(lastUserText()).toEndWith("what is the code?");
    await t.until((s) => s.includes("Hello from OpenAI") && !s.includes("+ notes.txt · goes with"), "the reply, the attachment gone");
    expect(t.screen()).toMatch(/\+ notes\.txt \(file-\w{24}\)/);

    await t.text("/attach missing.txt");
    await t.keys("Enter");
    await t.until((s) => s.includes("✖ No file at"), "the missing file");

    await t.text("/files");
    await t.keys("Enter");
    await t.until((s) => s.includes("Attach one of the server's files") && s.includes("notes.txt  24 B"), "the server's files");
    await t.keys("Enter");
    await t.until((s) => s.includes("+ notes.txt · goes with your next message"), "the picked file");
    await t.text("and again?");
    await t.keys("Enter");
    await t.until(() => gateway.openai.received.length === 2, "the second request");
    expect(lastUserText()).toContain("The launch code is 4242.");
  } finally {
    t.stop();
  }
}, 60_000);

test.skipIf(!hasTmux)("/copy puts the last reply or one code block on the terminal's clipboard (OSC 52)", async () => {
  const { t } = await terminal.chat(url, TEST_KEY);
  try {
    terminal.tmux("set-option", "-g", "set-clipboard", "on");
    const reply = "Two ways:\n```sh\necho one\n```\nor\n```python\nprint('two')\n```";
    gateway.openai.next({ kind: "reply", text: reply });
    gateway.openai.next({ kind: "reply", text: reply });
    await t.text("/settings stream off");
    await t.keys("Enter");
    await t.text("how?");
    await t.keys("Enter");
    await t.until((s) => s.includes("print('two')"), "the reply");
    await t.text("/copy");
    await t.keys("Enter");
    await t.until((s) => s.includes("Copied the last reply"), "the copy note");
    await t.until(() => terminal.tmux("show-buffer").stdout.toString() === reply, "the reply on the clipboard");
    await t.text("/copy 2");
    await t.keys("Enter");
    await t.until(() => terminal.tmux("show-buffer").stdout.toString() === "print('two')", "the second code block on the clipboard");
    await t.text("/copy 3");
    await t.keys("Enter");
    await t.until((s) => s.includes("The last reply has code blocks 1 to 2."), "the range");
  } finally {
    t.stop();
  }
}, 60_000);

test.skipIf(!hasTmux)("/save, /new, /load a saved file, /history opens an earlier conversation, --resume ID", async () => {
  const { t, dir, env, command: chat } = await terminal.chat(url, TEST_KEY);
  try {
    await t.text("apples");
    await t.keys("Enter");
    await t.until((s) => s.includes("Hello from OpenAI") && s.includes("#1 ·"), "conversation #1");
    await t.text("/save apples.json");
    await t.keys("Enter");
    await t.until((s) => s.includes("Saved to"), "the save");

    await t.text("/new");
    await t.keys("Enter");
    await t.until((s) => !s.includes("› apples") && !s.includes("#1 ·"), "a fresh conversation");
    await t.text("pears");
    await t.keys("Enter");
    await t.until((s) => s.includes("› pears") && s.includes("#2 ·"), "conversation #2");
    expect(gateway.openai.last().body.messages).toEqual([{ role: "user", content: "pears" }]);

    await t.text("/load apples.json");
    await t.keys("Enter");
    await t.until((s) => s.includes("Loaded 2 messages from apples.json") && s.includes("› apples") && s.includes("#3 ·"), "the loaded file");
    await t.text("more");
    await t.keys("Enter");
    await t.until(() => gateway.openai.received.length === 3, "the request after /load");
    expect(gateway.openai.last().body.messages.map((m: { content: string }) => m.content)).toEqual(["apples", "Hello from OpenAI", "more"]);

    writeFileSync(join(dir, "bad.json"), "{\"messages\": 3}");
    await t.text("/load bad.json");
    await t.keys("Enter");
    await t.until((s) => s.includes('it has no "messages" list'), "the refusal");

    await t.text("/history");
    await t.keys("Enter");
    await t.until((s) => s.includes("Conversations · search") && s.includes("#2") && s.includes("pears (1 prompt)"), "the list");
    expect(t.screen().indexOf("#3")).toBeLessThan(t.screen().indexOf("#2 "));
    await t.keys("Down");
    await t.keys("Enter");
    await t.until((s) => s.includes("› pears") && s.includes("#2 ·") && !s.includes("› more"), "conversation #2 opened");
    await t.text("and plums");
    await t.keys("Enter");
    await t.until(() => gateway.openai.received.length === 4, "the request in #2");
    expect(gateway.openai.last().body.messages.map((m: { content: string }) => m.content)).toEqual(["pears", "Hello from OpenAI", "and plums"]);
    await t.text("/exit");
    await t.keys("Enter");
    await t.until((s) => s.includes("EXIT=0"), "the end");
  } finally {
    t.stop();
  }
  expect(JSON.parse(readFileSync(join(dir, "apples.json"), "utf8")).messages).toHaveLength(2);

  const again = terminal.start(`${chat} --resume 1`, { cwd: dir, env });
  try {
    await again.until((s) => s.includes("› apples") && s.includes("#1 ·"), "conversation #1 resumed");
  } finally {
    again.stop();
  }
  const missing = terminal.start(`${chat} --resume 99`, { cwd: dir, env });
  try {
    await missing.until((s) => s.includes("No conversation #99"), "the missing conversation");
  } finally {
    missing.stop();
  }
}, 60_000);

test.skipIf(!hasTmux)("Markdown as a terminal shows it, code highlighted by language; NO_COLOR turns colours off", async () => {
  const reply = "# Plan\n\nUse **bold** and `code`, see [docs](http://example.com).\n\n- one\n- two\n\n> quoted\n\n| name | n |\n|---|--:|\n| a | 10 |\n\n```ts\nconst x = 1;\n```";
  for (const noColor of [false, true]) {
    gateway.openai.next({ kind: "stream", chunks: [reply] });
    const { t } = await terminal.chat(url, TEST_KEY, noColor ? { NO_COLOR: "1" } : {});
    try {
      await t.text("plan?");
      await t.keys("Enter");
      await t.until((s) => s.includes("│ const x = 1;"), "the code block");
      const screen = t.screen();
      for (const shown of ["Plan", "Use bold and ", "docs (http://example.com)", "• one", "│ quoted", "name │  n", "a    │ 10", "┌── ts"]) expect(screen).toContain(shown);
      expect(screen).not.toContain("**bold**");
      expect(screen).not.toContain("# Plan");
      const styled = t.screen(true);
      const colours = /\x1b\[[0-9;]*\b(3[1-7]|9[0-7])m/;
      if (noColor) {
        expect(styled).not.toMatch(colours);
        expect(screen).toContain("`code`");
      } else {
        // "const" as a keyword, "1" as a number: two different colours on the code line.
        const codeLine = styled.split("\n").find((l) => l.includes("const") && l.includes("x = "))!;
        expect(new Set(codeLine.match(/\x1b\[[0-9;]*m/g)).size).toBeGreaterThan(2);
        expect(styled).toMatch(colours);
      }
    } finally {
      t.stop();
    }
  }
}, 60_000);
