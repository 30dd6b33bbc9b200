import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { defineCommand } from "citty";
import { ConfigError, loadConfig, setConfigValue } from "../config.ts";
import { createLogger } from "../log.ts";
import { runServer } from "../server/serve.ts";
import { supervise } from "../server/supervisor.ts";
import { exitOnConfigError } from "./fail.ts";

export default defineCommand({
  meta: { name: "serve", description: "Start the gateway" },
  args: {
    host: { type: "string", description: "address to listen on (default 127.0.0.1)" },
    port: { type: "string", description: "port to listen on (default 8000)" },
    workers: { type: "string", description: "server processes sharing the port (default 1)" },
    reload: { type: "boolean", description: "restart the workers when ./.env or the user config file changes" },
    "log-level": { type: "string", description: "silent, error, warn, info, debug or trace" },
    worker: { type: "string", description: "(internal) run as worker N of a supervisor" },
  },
  run: ({ args }) =>
    exitOnConfigError(() => {
      const flags = { HOST: args.host, PORT: args.port, WORKERS: args.workers, LOG_LEVEL: args["log-level"] };
      if (args.worker) {
        const { config } = loadConfig({ flags });
        return void runServer(config, createLogger(config.logLevel).withTag(`worker ${args.worker}`), `worker ${args.worker}`);
      }

      let loaded = loadConfig({ flags });
      if (!loaded.config.apiKey) {
        const key = `sk-parley-${randomBytes(24).toString("base64url")}`;
        setConfigValue(loaded.configFile, "API_KEY", key);
        process.stdout.write(`No API_KEY was set, so parley generated one and stored it in ${loaded.configFile}:\n  ${key}\n`);
        loaded = loadConfig({ flags });
      }
      const { config, configFile } = loaded;
      const log = createLogger(config.logLevel);
      if (config.workers === 1 && !args.reload) return void runServer(config, log);

      // Workers must agree on one port; with --port 0 the supervisor picks a free one for all of them.
      const port = config.port === 0 ? freePort(config.host) : config.port;
      const passed = ["--host", config.host, "--port", String(port), ...(args["log-level"] ? ["--log-level", args["log-level"]] : [])];
      if (args.reload) mkdirSync(config.configDir, { recursive: true });
      log.info(`parley supervising ${config.workers} worker(s) on http://${config.host}:${port}${args.reload ? ", reloading on configuration changes" : ""}`);
      supervise({
        workers: config.workers,
        args: passed,
        watch: args.reload ? [join(process.cwd(), ".env"), configFile] : undefined,
        validate: () => {
          try {
            loadConfig({ flags });
          } catch (error) {
            if (error instanceof ConfigError) return error.message;
            throw error;
          }
        },
        graceMs: config.shutdownGraceMs,
        log,
      });
    }),
});

function freePort(hostname: string): number {
  const probe = Bun.serve({ hostname, port: 0, fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}
