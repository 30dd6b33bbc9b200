import { defineCommand, runMain } from "citty";
import { VERSION } from "../version.ts";
import { checkArgv } from "./strict-argv.ts";
import { showUsage } from "./usage.ts";

/** Sub-commands load lazily: `--version` loads nothing, `serve` never loads the chat client. */
const main = defineCommand({
  meta: { name: "parley", version: VERSION, description: "A local LLM gateway for OpenAI and AWS Bedrock models." },
  subCommands: {
    serve: () => import("./serve.ts").then((m) => m.default),
    config: () => import("./config.ts").then((m) => m.default),
    chat: () => import("./chat.ts").then((m) => m.default),
    models: () => import("./models.ts").then((m) => m.default),
    usage: () => import("./usage-report.ts").then((m) => m.default),
    upstreams: () => import("./upstreams.ts").then((m) => m.default),
    routes: () => import("./routes.ts").then((m) => m.default),
    cassettes: () => import("./cassettes.ts").then((m) => m.default),
    keys: () => import("./keys.ts").then((m) => m.default),
    trust: () => import("./trust.ts").then((m) => m.default),
  },
});

/** Checks the command line against every command's args, then lets citty run it. */
export async function run(argv: string[]): Promise<void> {
  const problem = await checkArgv(main, argv);
  if (problem) {
    process.stderr.write(`parley: ${problem}\n`);
    process.exit(2);
  }
  await runMain(main, { rawArgs: argv, showUsage });
}
