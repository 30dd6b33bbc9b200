import { randomBytes } from "node:crypto";
import { defineCommand } from "citty";
import { loadConfig, setConfigValue } from "../config.ts";
import { createLogger } from "../log.ts";
import { startServer } from "../server/serve.ts";
import { exitOnConfigError } from "./fail.ts";

export default defineCommand({
  meta: { name: "serve", description: "Start the gateway" },
  args: {
    host: { type: "string", description: "address to listen on (default 127.0.0.1)" },
    port: { type: "string", description: "port to listen on (default 8000)" },
    "log-level": { type: "string", description: "silent, error, warn, info, debug or trace" },
  },
  run: ({ args }) =>
    exitOnConfigError(() => {
      const flags = { HOST: args.host, PORT: args.port, LOG_LEVEL: args["log-level"] };
      let loaded = loadConfig({ flags });
      if (!loaded.config.apiKey) {
        const key = `sk-parley-${randomBytes(24).toString("base64url")}`;
        setConfigValue(loaded.configFile, "API_KEY", key);
        process.stdout.write(`No API_KEY was set, so parley generated one and stored it in ${loaded.configFile}:\n  ${key}\n`);
        loaded = loadConfig({ flags });
      }
      const { config } = loaded;
      const log = createLogger(config.logLevel);
      const app = startServer(config, log);
      log.info(`parley listening on http://${app.server!.hostname}:${app.server!.port} (docs at /docs)`);
    }),
});
