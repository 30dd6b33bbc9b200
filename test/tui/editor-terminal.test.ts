import { expect, test } from "bun:test";
import { TEST_KEY } from "../lib/gateway.ts";
import { terminalSuite } from "./tmux.ts";

// The line editor, prompt history, Ctrl+C and conversations kept across sessions, in a real terminal.
const { hasTmux, gateway, url, terminal } = await terminalSuite();

const contents = () => gateway.openai.received.map((r) => r.body.messages.at(-1).content);

test.skipIf(!hasTmux)("editing keys, Esc, Up/Down history, multi-line editing; Ctrl+C stops a reply, then quits; --continue", async () => {
  const { t, dir, env, command: chat } = await terminal.chat(url, TEST_KEY);
  try {

    // Cursor movement: Home/End, Ctrl+A/E, arrows.
    await t.text("world");
    await t.keys("Home");
    await t.text("hello ");
    await t.keys("End");
    await t.text("!");
    await t.keys("C-a");
    await t.keys("Right", "Right", "Right", "Right", "Right");
    await t.text(",");
    await t.keys("C-e");
    expect(t.input()).toBe("hello, world!");
    await t.keys("Enter");
    await t.until(() => gateway.openai.received.length === 1, "the first request");
    expect(JSON.stringify(contents())).toBe(JSON.stringify(["hello, world!"]));
    await t.until((s) => s.includes("Hello from OpenAI"), "the reply");

    // Kills: Ctrl+W a word, Alt+B back a word, Ctrl+K to the end, Ctrl+U to the start; Ctrl+Y puts back.
    await t.text("foo bar baz");
    await t.keys("C-w");
    expect(t.input()).toBe("foo bar");
    await t.text("qux quux");
    await t.keys("M-b");
    await t.keys("C-k");
    expect(t.input()).toBe("foo bar qux");
    await t.keys("M-b", "M-b");
    await t.keys("C-u");
    expect(t.input()).toBe("bar qux");
    await t.keys("C-e");
    await t.keys("C-y");
    expect(t.input()).toBe("bar qux foo");
    // Esc with no reply running asks; a second Esc clears the draft.
    await t.keys("Escape");
    await t.until((s) => s.includes("Esc again clears the draft"), "the question");
    await t.keys("Escape");
    await t.until(() => t.input() === "", "an empty draft");

    // Multi-line: Alt+Enter, then Up moves to the line above, not into history.
    await t.text("line one");
    await t.keys("M-Enter");
    await t.text("line two");
    await t.keys("Up");
    await t.text(" edited");
    await t.keys("Enter");
    await t.until(() => gateway.openai.received.length === 2, "the multi-line request");
    expect(contents()[1]).toBe("line one edited\nline two");
    await t.until((s) => s.split("Hello from OpenAI").length === 3, "the second reply");

    // Up/Down through earlier prompts; Down past the newest gives the draft back.
    await t.text("draft");
    await t.keys("Up");
    await t.until(() => t.input() === "line one edited", "the last prompt");
    await t.keys("Up", "Up");
    await t.until(() => t.input() === "hello, world!", "the first prompt");
    await t.keys("Down", "Down", "Down");
    await t.until(() => t.input() === "draft", "the draft again");
    await t.keys("C-u");

    // Ctrl+C during a reply stops it and the chat goes on; Ctrl+C when idle quits.
    gateway.openai.next({ kind: "stream", chunks: Array.from({ length: 40 }, (_, i) => `w${i} `), gapMs: 100 });
    await t.text("talk for a while");
    await t.keys("Enter");
    await t.until((s) => s.includes("w1 "), "the reply starting");
    await t.keys("C-c");
    await t.until((s) => s.includes("cancelled after"), "the reply cancelled");
    await t.until(() => gateway.openai.state.cancelled > 0, "the upstream request cancelled");
    expect(t.screen()).not.toContain("EXIT=");
    await t.keys("C-c");
    await t.until((s) => s.includes("EXIT=0"), "the chat ending");
  } finally {
    t.stop();
  }

  // The next session: --continue shows the conversation, and Up reaches the prompts typed before.
  const again = terminal.start(`${chat} --continue`, { cwd: dir, env });
  try {
    await again.until((s) => s.includes("› hello, world!") && s.includes("w1 ") && s.includes("#1 ·"), "the conversation again");
    await again.keys("Up");
    await again.until(() => again.input() === "talk for a while", "the last prompt of the last session");
    await again.keys("C-u");
    await again.text("and now?");
    await again.keys("Enter");
    await again.until(() => gateway.openai.received.length === 4, "a request in the continued conversation");
    const messages = gateway.openai.last().body.messages;
    expect(messages[0]).toEqual({ role: "user", content: "hello, world!" });
    expect(messages.at(-2)).toMatchObject({ role: "assistant", content: expect.stringContaining("w1 ") });
    expect(messages.at(-1)).toEqual({ role: "user", content: "and now?" });
  } finally {
    again.stop();
  }
}, 60_000);
