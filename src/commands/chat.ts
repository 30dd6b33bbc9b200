import { defineCommand } from "citty";
import { loadConfig } from "../config.ts";
import { chatOnce, isOneShot, ONE_SHOT_ARGS } from "./chat-once.ts";
import { exitOnConfigError } from "./fail.ts";

export default defineCommand({
  meta: { name: "chat", description: "Chat with a running parley in a full-screen terminal client" },
  args: {
    model: { type: "string", description: "model to start with (default: DEFAULT_ALPHA_MODEL, else the server's first)" },
    "server-url": { type: "string", description: "parley's address (default: from HOST and PORT, http://127.0.0.1:8000)" },
    "api-key": { type: "string", description: "key to present (default: API_KEY from the configuration)" },
    ...ONE_SHOT_ARGS,
    continue: { type: "boolean", description: "open the last conversation again" },
    resume: { type: "string", description: "open the conversation with this id (/history lists them)" },
  },
  run: ({ args, rawArgs }) =>
    exitOnConfigError(async () => {
      if (isOneShot(args)) return chatOnce(args, rawArgs);
      const { config } = loadConfig();
      const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
      const serverUrl = args["server-url"] ?? `http://${host.includes(":") ? `[${host}]` : host}:${config.port}`;
      // The chat client is loaded only here: `serve` never loads React or Ink.
      const { runChat } = await import("../../tui/main.tsx");
      const resume = args.resume !== undefined ? Number(args.resume) : args.continue ? "last" : undefined;
      if (typeof resume === "number" && !(Number.isInteger(resume) && resume > 0)) {
        console.error(`--resume takes a conversation id (a number), not "${args.resume}".`);
        process.exit(2);
      }
      await runChat({ serverUrl, apiKey: args["api-key"] ?? config.apiKey, model: args.model, defaultModel: config.defaultModel, dataDir: config.dataDir, resume });
      process.exit(0);
    }),
});
