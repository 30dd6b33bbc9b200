#!/usr/bin/env bun
import { defineCommand, runMain } from "citty";
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

runMain(main);
