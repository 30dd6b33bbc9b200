import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { TEST_KEY } from "../lib/gateway.ts";
import { terminalSuite } from "./tmux.ts";

// Keys typed one at a time in a real terminal (tmux): Ctrl+J, a queue while a reply streams, Esc
// twice, Tab, Ctrl+R, Ctrl+G, and the retries the server tells. PARLEY_BIN runs the built binary.
const { hasTmux, gateway, url, terminal } = await terminalSuite({ UPSTREAM_RETRIES: "2" });

const userMessages = () => gateway.openai.received.map((r) => (r.body.messages as { role: string; content: string }[]).filter((m) => m.role === "user").at(-1)?.content);

test.skipIf(!hasTmux)("Ctrl+J typed as its own key is a new line", async () => {
  const { t } = await terminal.chat(url, TEST_KEY);
  try {
    await t.text("first line");
    await t.keys("C-j");
    await t.text("second line");
    await t.until((s) => s.includes("> first line\n  second line"), "two input lines");
    await t.keys("Enter");
    await t.until(() => gateway.openai.received.length === 1, "the request");
    expect(userMessages()).toEqual(["first line\nsecond line"]);
  } finally {
    t.stop();
  }
}, 60_000);

test.skipIf(!hasTmux)("messages sent while a reply streams are queued, shown, editable and cancellable, and none is merged into another", async () => {
  gateway.openai.next({ kind: "stream", chunks: Array.from({ length: 40 }, (_, i) => `r${i} `), gapMs: 100 });
  const { t, dir } = await terminal.chat(url, TEST_KEY);
  writeFileSync(join(dir, "notes.md"), "# notes\n");
  try {
    await t.text("please ramble on");
    await t.keys("Enter");
    await t.until((s) => s.includes("r3 "), "the reply streaming");
    await t.text("/attach notes.md");
    await t.keys("Enter");
    await t.until((s) => s.includes("Attached notes.md"), "the upload");
    await t.text("summarise the notes");
    await t.keys("Enter");
    await t.until((s) => s.includes("⧗ queued: summarise the notes"), "the queued message");
    await t.text("a third one");
    await t.keys("Enter");
    await t.until((s) => s.includes("⧗ queued: a third one"), "the second queued message");
    // Up on an empty line takes the last queued message back; Ctrl+U drops it (Esc would cancel the reply).
    await t.keys("Up");
    await t.until(() => t.input() === "a third one", "the message back in the editor");
    expect(t.screen()).not.toContain("⧗ queued: a third one");
    await t.keys("C-u");
    await t.until(() => t.input() === "", "the message dropped");
    expect(gateway.openai.received).toHaveLength(1);

    await t.until(() => gateway.openai.received.length === 2, "the queued message sent when the reply ended", 60_000);
    await t.until((s) => s.includes("› summarise the notes") && !s.includes("⧗ queued"), "the queue empty");
    const [first, second] = userMessages();
    expect(first).toBe("please ramble on");
    // The file went with the message it was attached for, before the message's own text.
    expect(second).toMatch(/# notes[\s\S]*summarise the notes$/);
    expect(gateway.openai.received).toHaveLength(2);
  } finally {
    t.stop();
  }
}, 120_000);

test.skipIf(!hasTmux)("the status line says what the chat waits for: the server's retries with Retry-After, then the first token", async () => {
  gateway.openai.next({ kind: "error", status: 429, message: "slow down", headers: { "retry-after": "4" } });
  gateway.openai.next({ kind: "stream", chunks: ["Finally"], firstByteMs: 3000 });
  const { t } = await terminal.chat(url, TEST_KEY);
  try {
    await t.text("hello?");
    await t.keys("Enter");
    await t.until((s) => /rate limited \(429\), Retry-After 4s · retrying in \d\.\ds \(attempt 2 of 3\)/.test(s), "the retry and its wait");
    await t.until((s) => s.includes("attempt 2 of 3: waiting for the first token"), "the wait for the first token", 60_000);
    await t.until((s) => s.includes("Finally"), "the reply", 60_000);
  } finally {
    t.stop();
  }
}, 120_000);

test.skipIf(!hasTmux)("Esc on a draft asks first, a second Esc clears it, Ctrl+Z brings it back", async () => {
  gateway.openai.next({ kind: "stream", chunks: ["done"] });
  const { t } = await terminal.chat(url, TEST_KEY);
  try {
    await t.text("q");
    await t.keys("Enter");
    await t.until((s) => s.includes("done"), "the reply");
    await t.text("a long draft I want");
    await t.keys("Escape");
    await t.until((s) => s.includes("Esc again clears the draft"), "the question");
    expect(t.input()).toBe("a long draft I want");
    await t.keys("Escape");
    await t.until(() => t.input() === "", "the draft cleared");
    await t.keys("C-z");
    await t.until(() => t.input() === "a long draft I want", "the draft back");
  } finally {
    t.stop();
  }
}, 60_000);

test.skipIf(!hasTmux)("Tab completes commands, model ids (with their upstream) and paths; unknown commands are marked as typed", async () => {
  const { t, dir } = await terminal.chat(url, TEST_KEY);
  writeFileSync(join(dir, "notes.md"), "notes");
  try {
    await t.text("/he");
    await t.keys("Tab");
    await t.until(() => t.input() === "/help", "/help completed");
    await t.keys("C-u");
    await t.text("/model gpt-4o-m");
    await t.keys("Tab");
    await t.until(() => t.input() === "/model gpt-4o-mini", "the model id completed");
    await t.keys("C-u");
    await t.text("/model gpt-4");
    await t.keys("Tab");
    await t.until((s) => s.includes("Tab: gpt-4.1 (alpha)") || s.includes("gpt-4o (alpha)"), "the choices with their upstream");
    await t.keys("C-u");
    await t.text("/attach no");
    await t.keys("Tab");
    await t.until(() => t.input() === "/attach notes.md", "the path completed");
    await t.keys("C-u");
    await t.text("/frobnicate");
    await t.until((s) => s.includes("/frobnicate is not a command"), "the unknown command marked");
  } finally {
    t.stop();
  }
}, 60_000);

test.skipIf(!hasTmux)("Ctrl+R searches earlier prompts; Ctrl+G and Ctrl+X Ctrl+E edit the draft in $EDITOR", async () => {
  const { t } = await terminal.chat(url, TEST_KEY, { EDITOR: "sed -i s/draft/edited/" });
  try {
    for (const prompt of ["alpha question", "beta question"]) {
      await t.text(prompt);
      await t.keys("Enter");
      await t.until((s) => s.includes(`› ${prompt}`), prompt);
    }
    await t.until(() => gateway.openai.received.length === 2, "both requests");
    await t.keys("C-r");
    await t.text("alp");
    await t.until((s) => s.includes("reverse search: alp") && t.input() === "alpha question", "the match");
    await t.keys("Enter");
    await t.until(() => t.input() === "alpha question" && !t.screen().includes("reverse search"), "the match taken");
    expect(gateway.openai.received).toHaveLength(2);

    await t.keys("C-u");
    await t.text("my draft here");
    await t.keys("C-g");
    await t.until(() => t.input() === "my edited here", "the draft from the editor");
    await t.keys("C-u");
    await t.text("another draft");
    await t.keys("C-x", "C-e");
    await t.until(() => t.input() === "another edited", "Ctrl+X Ctrl+E");
  } finally {
    t.stop();
  }
}, 60_000);

test.skipIf(!hasTmux)("/history searches conversations by their text, renames and deletes them", async () => {
  const { t } = await terminal.chat(url, TEST_KEY);
  try {
    gateway.openai.next({ kind: "stream", chunks: ["Lighthouses use a Fresnel lens."] });
    await t.text("how do lighthouses work");
    await t.keys("Enter");
    await t.until((s) => s.includes("Fresnel lens."), "the first reply");
    await t.text("/new");
    await t.keys("Enter");
    gateway.openai.next({ kind: "stream", chunks: ["Knead the dough."] });
    await t.text("bread please");
    await t.keys("Enter");
    await t.until((s) => s.includes("Knead the dough."), "the second reply");

    await t.text("/history");
    await t.keys("Enter");
    await t.until((s) => s.includes("#1 ") && s.includes("#2 "), "both conversations");
    await t.text("fresnel");
    // The match is marked [like this]; how much of it shows depends on the row's width (the time of day is in it).
    await t.until((s) => s.includes("[Fre") && !s.includes("bread please ("), "the search");
    await t.keys("C-r");
    await t.until((s) => s.includes("New title:"), "the rename field");
    // Ctrl+U clears the old title: the new one is all that is left.
    await t.keys("C-u");
    await t.text("Lights at sea");
    await t.keys("Enter");
    await t.until((s) => s.includes("Lights at sea (1 prompt)"), "the new title");
    await t.keys("C-d");
    await t.until((s) => s.includes("Delete #1 \"Lights at sea\" for good?"), "the question");
    await t.keys("C-d");
    await t.until((s) => s.includes("no conversation has these words"), "the conversation gone");
    await t.keys("Escape");
    await t.text("/history");
    await t.keys("Enter");
    await t.until((s) => s.includes("#2 ") && !s.includes("#1 "), "only the second left");
  } finally {
    t.stop();
  }
}, 90_000);
