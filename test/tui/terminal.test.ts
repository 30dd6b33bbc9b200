import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SETTINGS } from "../../src/config.ts";
import { startGateway, TEST_KEY } from "../lib/gateway.ts";
import { PARLEY } from "./tmux.ts";

// A real terminal: tmux runs `parley chat`, we type with send-keys and read the screen with capture-pane.
const tmux = Bun.which("tmux");
const session = `parley-e2e-${process.pid}`;
const gateway = await startGateway({ RATE_LIMIT_RPM: "0" });
const url = gateway.listen();
afterAll(async () => {
  Bun.spawnSync(["tmux", "kill-session", "-t", session]);
  await gateway.stop();
});

const screen = () => Bun.spawnSync(["tmux", "capture-pane", "-p", "-t", session]).stdout.toString();
const keys = async (...args: string[]) => {
  Bun.spawnSync(["tmux", "send-keys", "-t", session, ...args]);
  await Bun.sleep(150);
};
async function until(check: (s: string) => boolean, what: string, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!check(screen())) {
    if (Date.now() > deadline) throw new Error(`never saw ${what}; screen:\n${screen()}`);
    await Bun.sleep(50);
  }
}

test.skipIf(!tmux)("parley chat in a real terminal: question, streamed answer, /model, /save, /exit", async () => {
  const dir = mkdtempSync(join(tmpdir(), "parley-term-"));
  gateway.openai.next({ kind: "stream", chunks: ["Paris ", "is ", "the ", "capital."], gapMs: 150 });
  const command = `cd ${dir} && HOME=${dir} ${PARLEY} chat --server-url ${url} --api-key ${TEST_KEY} --model gpt-4o; echo "EXIT=$?"; sleep 60`;
  Bun.spawnSync(["tmux", "new-session", "-d", "-s", session, "-x", "100", "-y", "30", command]);

  await until((s) => s.includes("parley · gpt-4o ·"), "the chat screen");
  await keys("What is the capital of France?");
  await keys("Enter");
  await until((s) => s.includes("› What is the capital of France?"), "the question");
  await until((s) => s.includes("Paris is the capital."), "the streamed answer");
  await until((s) => /gpt-4o · \d+\.\ds · 11 → 7 tokens/.test(s), "time and usage");

  await keys("/model gpt-4o-mini");
  await keys("Enter");
  await until((s) => s.includes("parley · gpt-4o-mini ·"), "the new model");

  await keys("/save answer.md");
  await keys("Enter");
  await until((s) => s.includes("Saved to"), "the save note");
  const saved = readFileSync(join(dir, "answer.md"), "utf8");
  expect(saved).toContain("What is the capital of France?");
  expect(saved).toContain("Paris is the capital.");

  await keys("/exit");
  await keys("Enter");
  await until((s) => s.includes("EXIT=0"), "the process ending with 0");
  expect(existsSync(join(dir, "answer.md"))).toBe(true);
}, 60_000);

test.skipIf(!tmux)("parley config set with no arguments: pick, type (secrets masked), validated before writing", async () => {
  const dir = mkdtempSync(join(tmpdir(), "parley-config-"));
  const name = `${session}-config`;
  const show = () => Bun.spawnSync(["tmux", "capture-pane", "-p", "-t", name]).stdout.toString();
  const press = async (...args: string[]) => {
    Bun.spawnSync(["tmux", "send-keys", "-t", name, ...args]);
    await Bun.sleep(150);
  };
  const wait = async (check: (s: string) => boolean, what: string) => {
    const deadline = Date.now() + 15_000;
    while (!check(show())) {
      if (Date.now() > deadline) throw new Error(`never saw ${what}; screen:\n${show()}`);
      await Bun.sleep(50);
    }
  };
  Bun.spawnSync(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", `cd ${dir} && HOME=${dir} ${PARLEY} config set; echo "EXIT=$?"; sleep 60`]);
  try {
    await wait((s) => s.includes("Which setting?"), "the prompt");
    await press("Down");
    await press("Enter");
    await wait((s) => s.includes("PORT (port to listen on"), "the PORT question");
    await press("BSpace", "BSpace", "BSpace", "BSpace");
    await press("abc", "Enter");
    await wait((s) => s.includes("PORT: expected an integer from 0 to 65535"), "the validation message");
    await press("BSpace", "BSpace", "BSpace");
    await press("9001", "Enter");
    await wait((s) => s.includes("PORT saved"), "PORT saved");
    // The picker opens on the first setting again; ALPHA_API_KEY is as far down as SETTINGS lists it.
    const downs = SETTINGS.findIndex((setting) => setting.key === "ALPHA_API_KEY");
    for (let i = 0; i < downs; i++) await press("Down");
    await press("Enter");
    await wait((s) => s.includes("ALPHA_API_KEY (OpenAI API key"), "the key question");
    await press("sk-typed-secret-42");
    await wait((s) => s.includes("••••••••"), "the mask");
    expect(show()).not.toContain("sk-typed-secret-42");
    await press("Enter");
    await wait((s) => s.includes("ALPHA_API_KEY saved"), "the key saved");
    await press("Up");
    await press("Enter");
    await wait((s) => s.includes("EXIT=0"), "the end");
    const file = readFileSync(join(dir, ".config", "parley", "config.env"), "utf8");
    expect(file).toContain("PORT='9001'");
    expect(file).toContain("ALPHA_API_KEY='sk-typed-secret-42'");
    expect(file).not.toContain("abc");
  } finally {
    Bun.spawnSync(["tmux", "kill-session", "-t", name]);
  }
}, 60_000);
