import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { createAccessLog } from "./access-log.ts";
import { createApp } from "./app.ts";

/**
 * Runs one server process: listens, and on SIGINT/SIGTERM stops accepting, lets in-flight
 * requests and streams finish (at most SHUTDOWN_GRACE_MS), closes SQLite and exits.
 */
export function runServer(config: Config, log: Logger, tag?: string) {
  const logsRequests = ["info", "debug", "trace"].includes(config.logLevel);
  const app = createApp({ config, log, ...(logsRequests ? { accessLog: createAccessLog({ tag, upstream: ["debug", "trace"].includes(config.logLevel) }) } : {}) }).listen({
    hostname: config.host,
    port: config.port,
    reusePort: true,
    // Streams can sit quiet for long stretches while a model thinks.
    idleTimeout: 0,
    maxRequestBodySize: config.files.maxUploadBytes + 1024 * 1024,
  });
  const server = app.server!;
  log.info(`parley listening on http://${server.hostname}:${server.port} (docs at /docs)`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: finishing ${server.pendingRequests} in-flight request(s), then stopping`);
    const drained = server.stop(false);
    const grace = Bun.sleep(config.shutdownGraceMs).then(() => "timeout" as const);
    if ((await Promise.race([drained, grace])) === "timeout") {
      log.warn(`shutdown grace of ${config.shutdownGraceMs} ms is over: closing the remaining connections`);
      await server.stop(true);
    }
    await app.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  return app;
}
