#!/usr/bin/env bun
import "./commands/color.ts";
import { defineCommand, runMain } from "citty";
import { checkArgv } from "./commands/strict-argv.ts";
import { showUsage } from "./commands/usage.ts";
import { VERSION } from "./version.ts";

/** Sub-commands load lazily: `--version` loads nothing, `serve` never loads the chat client. */
const main = defineCommand({
  meta: { name: "parley", version: VERSION, description: "A local LLM gateway for OpenAI and AWS Bedrock models." },
  subCommands: {
    serve: () => import("./commands/serve.ts").then((m) => m.default),
    config: () => import("./commands/config.ts").then((m) => m.default),
    chat: () => import("./commands/chat.ts").then((m) => m.default),
  },
});

const argv = process.argv.slice(2);
const problem = await checkArgv(main, argv);
if (problem) {
  process.stderr.write(`parley: ${problem}\n`);
  process.exit(2);
}
await runMain(main, { rawArgs: argv, showUsage });
