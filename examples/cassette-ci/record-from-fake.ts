/**
 * Re-records cassettes/default.har from this repository's fake OpenAI (test/lib/fake-openai.ts),
 * as a laptop records from the real one: `bun examples/cassette-ci/record-from-fake.ts`. It runs the
 * example's own test in record mode against the fake.
 */
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { startFakeOpenAI } from "../../test/lib/fake-openai.ts";

const here = import.meta.dir;
const openai = await startFakeOpenAI();
openai.next(
  { kind: "reply", text: "The capital of France is Paris.", usage: [21, 8] },
  { kind: "stream", chunks: ["The capital", " of France", " is Paris."], usage: [21, 8], gapMs: 40 },
);
rmSync(resolve(here, "cassettes/default.har"), { force: true });
// Run from this folder: the repository's test preload (which clears PARLEY_* and ALPHA_*) is not loaded.
const run = Bun.spawn(["bun", "test", "./parley.test.ts"], {
  cwd: here,
  env: { ...process.env, PARLEY_CASSETTE_MODE: "record", ALPHA_BASE_URL: openai.url, ALPHA_API_KEY: "sk-proj-fake-key-for-the-fake-upstream" },
  stdout: "inherit",
  stderr: "inherit",
});
const code = await run.exited;
openai.stop();
process.exit(code);
