import { expect, test } from "bun:test";
import { TEST_KEY } from "../lib/gateway.ts";
import { terminalSuite } from "./tmux.ts";

// Failed turns, /retry and /edit, what a reply can be (tool calls, cut off, 429), token totals and
// /settings, in a real terminal.
const { hasTmux, gateway, url, terminal } = await terminalSuite({ UPSTREAM_RETRIES: "0" }); // scripted failures reach the chat as they are

const sent = () => gateway.openai.last().body.messages as { role: string; content: string }[];

test.skipIf(!hasTmux)("a failed turn is not sent again; /retry asks again; /edit takes the prompt back", async () => {
  const { t } = await terminal.chat(url, TEST_KEY);
  try {
    await t.text("first");
    await t.keys("Enter");
    await t.until((s) => s.includes("Hello from OpenAI"), "the first reply");

    gateway.openai.next({ kind: "error", status: 500, message: "boom" });
    await t.text("broken");
    await t.keys("Enter");
    await t.until((s) => s.includes("✖ 503 service_unavailable_error"), "the error");
    expect(t.screen()).toContain("not part of the conversation any more");

    gateway.openai.next({ kind: "stream", chunks: ["Second ", "answer"] });
    await t.text("third");
    await t.keys("Enter");
    await t.until((s) => s.includes("Second answer"), "the next reply");
    expect(sent()).toEqual([
      { role: "user", content: "first" }, { role: "assistant", content: "Hello from OpenAI" }, { role: "user", content: "third" },
    ]);

    gateway.openai.next({ kind: "stream", chunks: ["Another ", "try"] });
    await t.text("/retry");
    await t.keys("Enter");
    await t.until((s) => s.includes("Another try") && !s.includes("Second answer"), "the reply asked for again");
    expect(sent().map((m) => m.content)).toEqual(["first", "Hello from OpenAI", "third"]);
    expect(t.screen().split("› third").length).toBe(2);

    await t.text("/edit");
    await t.keys("Enter");
    await t.until(() => t.input() === "third", "the last prompt back in the editor");
    expect(t.screen()).not.toContain("Another try");
    await t.keys("C-w");
    await t.text("changed");
    await t.keys("Enter");
    await t.until(() => sent().at(-1)?.content === "changed", "the edited prompt sent");
    expect(sent().map((m) => m.content)).toEqual(["first", "Hello from OpenAI", "changed"]);
  } finally {
    t.stop();
  }
}, 60_000);

test.skipIf(!hasTmux)("tool calls, a reply cut at the token limit, Retry-After, the token total, /settings checked and kept", async () => {
  const { t, dir, env, command: chat } = await terminal.chat(url, TEST_KEY);
  try {
    gateway.openai.next({ kind: "stream", chunks: [], toolCalls: [{ id: "call_1", name: "get_weather", arguments: ['{"city":', '"Paris"}'] }] });
    await t.text("weather?");
    await t.keys("Enter");
    await t.until((s) => s.includes('⚙ tool call get_weather({"city":"Paris"})'), "the tool call");
    await t.until((s) => /11 → 7 tokens( · \$[0-9.]+)? this chat/.test(s), "the token total");

    gateway.openai.next({ kind: "stream", chunks: ["A long story that"], finish: "length", usage: [20, 5] });
    await t.text("a story");
    await t.keys("Enter");
    await t.until((s) => s.includes("✂ cut off at the token limit"), "the cut-off mark");
    await t.until((s) => /31 → 12 tokens( · \$[0-9.]+)? this chat/.test(s), "the token total growing");

    gateway.openai.next({ kind: "error", status: 429, message: "slow down", headers: { "retry-after": "7" } });
    await t.text("again");
    await t.keys("Enter");
    await t.until((s) => s.includes("✖ 429 rate_limit_error") && s.includes("retry after 7s"), "Retry-After");

    await t.text("/settings temperature abc");
    await t.keys("Enter");
    await t.until((s) => s.includes("Temperature is a number from 0 to 2. Nothing was changed."), "the refusal");
    await t.text("/settings temperature 0.3");
    await t.keys("Enter");
    await t.text("/settings system Answer in French.");
    await t.keys("Enter");
    await t.until((s) => s.includes("system prompt on"), "the system prompt in the header");
    await t.keys("C-c");
    await t.until((s) => s.includes("EXIT=0"), "the chat ending");
  } finally {
    t.stop();
  }

  // A new session keeps the settings.
  const again = terminal.start(chat, { cwd: dir, env });
  try {
    await again.until((s) => s.includes("parley · gpt-4o · system prompt on"), "the settings kept");
    await again.text("bonjour");
    await again.keys("Enter");
    await again.until(() => gateway.openai.received.length === 4, "the request");
    expect(gateway.openai.last().body).toMatchObject({ temperature: 0.3, messages: [{ role: "system", content: "Answer in French." }, { role: "user", content: "bonjour" }] });
  } finally {
    again.stop();
  }
}, 60_000);

test.skipIf(!hasTmux)("a reply is kept as it streams: a terminal closed mid-reply loses at most the last second", async () => {
  gateway.openai.next({ kind: "stream", chunks: Array.from({ length: 60 }, (_, i) => `w${i} `), gapMs: 100 });
  const { t, dir, env, command: chat } = await terminal.chat(url, TEST_KEY);
  await t.text("talk for a while");
  await t.keys("Enter");
  await t.until((s) => s.includes("w25 "), "a good part of the reply");
  t.stop();

  const again = terminal.start(`${chat} --continue`, { cwd: dir, env });
  try {
    await again.until((s) => s.includes("› talk for a while") && s.includes("w12 ") && s.includes("interrupted"), "the reply so far");
  } finally {
    again.stop();
  }
}, 60_000);
