import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { createApp } from "./app.ts";

/** Starts one server process on the configured address. */
export function startServer(config: Config, log: Logger) {
  const app = createApp({ config, log }).listen({
    hostname: config.host,
    port: config.port,
    reusePort: config.workers > 1,
    // Streams can sit quiet for long stretches while a model thinks.
    idleTimeout: 0,
    maxRequestBodySize: config.files.maxUploadBytes + 1024 * 1024,
  });
  return app;
}
