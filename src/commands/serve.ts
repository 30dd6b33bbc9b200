import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { defineCommand } from "citty";
import { ConfigError, loadConfig, setConfigValue, untrustedLine, type Loaded } from "../config.ts";
import { announce, createLogger, type Logger } from "../log.ts";
import { sweepAtStart } from "../files/sweep.ts";
import { tightenDataDir } from "../server/data-dir.ts";
import { configured } from "../providers/registry.ts";
import { KINDS, missing } from "../providers/kinds.ts";
import { checkPort, printReady, runServer, urlOf } from "../server/serve.ts";
import { supervise } from "../server/supervisor.ts";
import { exitOnConfigError } from "./fail.ts";

export default defineCommand({
  meta: { name: "serve", description: "Start the gateway" },
  args: {
    host: { type: "string", description: "address to listen on (default 127.0.0.1)" },
    port: { type: "string", description: "port to listen on (default 8000; 0 picks a free one)" },
    workers: { type: "string", description: "server processes sharing the port (default 1)" },
    reload: { type: "boolean", description: "restart the workers when ./.env or the user config file changes" },
    "log-level": { type: "string", description: "silent, error, warn, info, debug or trace" },
    "log-format": { type: "string", description: "text (default) or json: one JSON object per log line" },
    upstreams: { type: "string", description: "the upstreams file (default ./parley.toml, else parley.toml in the config directory)" },
    cassettes: { type: "string", description: "record upstream calls to, or replay them from, HAR files in this directory (docs/ci.md)" },
    "cassette-mode": { type: "string", description: "record, replay (default: answers from the cassettes, no keys, nothing goes out) or auto (replay what is there, record the rest)" },
    "exit-with-parent": { type: "boolean", description: "exit when the process that started parley dies (an app's sidecar)" },
    worker: { type: "string", description: "(internal) run as worker N of a supervisor" },
  },
  run: ({ args }) =>
    exitOnConfigError(() => {
      const flags = { HOST: args.host, PORT: args.port, WORKERS: args.workers, LOG_LEVEL: args["log-level"], LOG_FORMAT: args["log-format"], PARLEY_UPSTREAMS: args.upstreams, PARLEY_EXIT_WITH_PARENT: args["exit-with-parent"] ? "true" : undefined, PARLEY_CASSETTES: args.cassettes, PARLEY_CASSETTE_MODE: args["cassette-mode"] };
      const load = () => loadConfig({ flags });
      if (args.worker) {
        const loaded = load();
        const log = createLogger(loaded.config.logLevel, loaded.config.logFormat).withTag(`worker ${args.worker}`);
        return void runServer(loaded.config, log, { worker: Number(args.worker), reload: { file: loaded.upstreamsFile, load } });
      }

      let loaded = loadConfig({ flags });
      const log = createLogger(loaded.config.logLevel, loaded.config.logFormat);
      if (!loaded.config.apiKey) {
        const key = `sk-parley-${randomBytes(24).toString("base64url")}`;
        setConfigValue(loaded.configFile, "API_KEY", key);
        // stderr: stdout carries only the ready line.
        announce(loaded.config.logFormat, `No API_KEY was set, so parley generated one and stored it in ${loaded.configFile}:\n  ${key}`);
        loaded = loadConfig({ flags });
      }
      const { config, configFile } = loaded;
      if (config.workers === 1 && !args.reload) {
        const url = runServer(config, log, { reload: { file: loaded.upstreamsFile, load } });
        summarize(loaded, log);
        return printReady(url, config);
      }

      // Workers must agree on one port; with --port 0 the check picks a free one for all of them.
      const port = checkPort(config.host, config.port);
      // Before the workers exist: a killed generation's pids may come back as theirs (PID 2, 3 in a container).
      tightenDataDir(config.dataDir, log);
      sweepAtStart(config, log);
      summarize(loaded, log);
      const passed = ["--host", config.host, "--port", String(port), ...(args["log-level"] ? ["--log-level", args["log-level"]] : []), ...(args["log-format"] ? ["--log-format", args["log-format"]] : []), ...(args.upstreams ? ["--upstreams", args.upstreams] : []), ...(args.cassettes ? ["--cassettes", args.cassettes] : []), ...(args["cassette-mode"] ? ["--cassette-mode", args["cassette-mode"]] : []), ...(config.exitWithParent ? ["--exit-with-parent"] : [])];
      if (args.reload) mkdirSync(config.configDir, { recursive: true });
      const url = urlOf(config.host, port);
      log.info(`parley supervising ${config.workers} worker(s) on ${url}${args.reload ? ", reloading on configuration changes" : ""}`);
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
        exitWithParent: config.exitWithParent,
        log,
        onReady: () => printReady(url, config),
      });
    }),
});

/** What a person starting the server wants to know: upstreams, where the key and the data live. */
function summarize({ config, entries, configFile, upstreamsFile, untrusted, warnings }: Loaded, log: Logger): void {
  for (const file of untrusted) log.warn(untrustedLine(file));
  for (const warning of warnings) log.warn(`${warning}: check that you trust where it points`);
  const upstreams = Object.entries(configured(config.upstreams.upstreams));
  log.info(`upstreams${upstreamsFile ? ` (${upstreamsFile})` : ""}: ${upstreams.map(([name, status]) => `${name} ${status === "available" ? "configured" : "not configured"}`).join(", ")}`);
  const source = entries.find((e) => e.key === "API_KEY")?.source;
  log.info(`API key: ${source === "config file" ? `in ${configFile}` : `from ${source === "env" ? "the environment" : source === ".env" ? "./.env" : source}`}`);
  log.info(`data: ${config.dataDir}; files in ${config.files.bucket ? `S3 bucket ${config.files.bucket}` : "the local store there"}`);
  const { cassettes } = config;
  if (cassettes) log.info(`cassettes: ${cassettes.mode} in ${cassettes.dir}${cassettes.mode === "replay" ? " (no upstream call goes out)" : ""}`);
  if (cassettes?.mode === "replay" && !existsSync(cassettes.dir)) log.warn(`the cassettes directory ${cassettes.dir} does not exist: every upstream call will be a replay miss (404)`);
  const real = config.upstreams.upstreams.filter((u) => !KINDS[u.kind].builtIn);
  if (!real.some((u) => !missing(u))) {
    log.warn(`no real upstream is configured: only the built-in mock answers (model "mock"); set ${real.map((u) => `${u.name}: ${missing(u)}`).join("; or ")} (parley config set KEY VALUE), or declare upstreams in parley.toml`);
  }
}
