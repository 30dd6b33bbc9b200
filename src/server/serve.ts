import type { Config, Loaded } from "../config.ts";
import { envelope, GatewayError } from "../errors.ts";
import { sweepAtStart } from "../files/sweep.ts";
import { tightenDataDir } from "./data-dir.ts";
import type { Logger } from "../log.ts";
import { configured } from "../providers/registry.ts";
import { createTelemetry } from "../telemetry/index.ts";
import { VERSION } from "../version.ts";
import { createAccessLog } from "./access-log.ts";
import { createApp } from "./app.ts";
import { reloadUpstreams } from "./upstreams-reload.ts";
import { ORPHAN_GRACE_MS, watchParent } from "./parent.ts";

export interface RunOptions {
  /** Runs as worker N of a supervisor: shares the port, and reports and stops over IPC. */
  worker?: number;
  /** Reads the configuration again, for reloading the upstreams file (on its change and on SIGHUP). */
  reload?: { file: string | undefined; load: () => Loaded };
}

/** Messages between a supervisor and its workers. */
export type WorkerMessage = { type: "ready" } | { type: "stop"; graceMs?: number } | { type: "closed" };

/**
 * Runs one server process: listens, and on SIGINT/SIGTERM (or a supervisor's stop message, or the
 * supervisor going away) stops accepting, lets in-flight requests and streams finish (at most
 * SHUTDOWN_GRACE_MS), closes SQLite and exits. Returns the URL it serves on.
 */
export function runServer(config: Config, log: Logger, { worker, reload }: RunOptions = {}): string {
  const tag = worker === undefined ? undefined : `worker ${worker}`;
  const logsRequests = ["info", "debug", "trace"].includes(config.logLevel);
  const accessLog = logsRequests ? createAccessLog({ tag, upstream: ["debug", "trace"].includes(config.logLevel), format: config.logFormat }) : undefined;
  // The standard OTEL_* variables, read as every OpenTelemetry SDK reads them: from the environment.
  const { telemetry, warnings } = createTelemetry(process.env, VERSION);
  for (const warning of warnings) log.warn(warning);
  const app = createApp({ config, log, telemetry, ...(accessLog ? { accessLog } : {}) });
  tightenDataDir(config.dataDir, log);
  sweepAtStart(config, log);
  const { maxConnections } = config.limits;
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      fetch: (request, server) => {
        // A request waiting on its upstream, or streaming a quiet answer, is not idle: IDLE_TIMEOUT_S
        // is for connections between requests, and BODY_TIMEOUT_S for a body that stops arriving.
        server.timeout(request, 0);
        if (server.pendingRequests > maxConnections) return overloaded(maxConnections);
        return app.handle(request, () => server.requestIP(request)?.address);
      },
      hostname: config.host,
      port: config.port,
      // Only a supervisor's own workers share a port; a lone server must not split a port with anyone.
      reusePort: worker !== undefined,
      idleTimeout: config.limits.idleTimeoutS,
      // parley enforces the body limit itself (edge/body.ts), so that the answer is the envelope.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      development: false,
      // Last resort for anything that escapes the app: the envelope, never Bun's error page.
      error: (error) => {
        log.error("unhandled error:", error);
        return Response.json(envelope(new GatewayError(500, "internal_server_error", "Internal error.")), { status: 500 });
      },
    });
  } catch (error) {
    return failToListen(config.host, config.port, error);
  }
  const url = urlOf(config.host, server.port!);
  log.info(`parley listening on ${url} (docs at /docs${config.ui ? `, dashboard at ${url}/ui` : ""})`);
  const unwatch = reload ? reloadUpstreams({ ...reload, app, log, worker: worker !== undefined }) : undefined;

  let stopping = false;
  const shutdown = async (reason: string, graceMs = config.shutdownGraceMs) => {
    if (stopping) return;
    stopping = true;
    log.info(`${reason}: finishing ${server.pendingRequests} in-flight request(s), then stopping`);
    unwatch?.();
    const drained = server.stop(false);
    // No longer accepting: a supervisor says a reload is done only once every old worker has said so.
    if (worker !== undefined && process.connected) process.send?.({ type: "closed" } satisfies WorkerMessage);
    const grace = Bun.sleep(graceMs).then(() => "timeout" as const);
    if ((await Promise.race([drained, grace])) === "timeout") {
      log.warn(`shutdown grace of ${graceMs} ms is over: closing the remaining connections`);
      await server.stop(true);
    }
    await app.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  const orphanGrace = Math.min(config.shutdownGraceMs, ORPHAN_GRACE_MS);
  if (worker === undefined && config.exitWithParent) watchParent(() => void shutdown("the process that started parley is gone", orphanGrace));
  if (worker !== undefined && process.send) {
    process.on("message", (message: WorkerMessage) => {
      if (message?.type === "stop") void shutdown("stop from the supervisor", message.graceMs);
    });
    // The IPC channel closes when the supervisor exits, however it died: no orphan keeps serving.
    process.on("disconnect", () => void shutdown("the supervisor is gone", config.exitWithParent ? orphanGrace : undefined));
    process.send({ type: "ready" } satisfies WorkerMessage);
  }
  return url;
}

/** MAX_CONNECTIONS reached: answered at once, and the connection closed, so that it frees a place. */
function overloaded(max: number): Response {
  const error = new GatewayError(503, "service_unavailable_error", `parley is holding its limit of ${max} requests (MAX_CONNECTIONS); try again shortly.`);
  return Response.json(envelope(error), { status: 503, headers: { connection: "close", "retry-after": "1" } });
}

/**
 * Checks that nothing else holds the port (another parley, or any other program) by binding it
 * without reusePort, and returns the port (a free one for port 0). A supervisor calls this before
 * its workers bind with reusePort, so that they never split a port with a stranger.
 */
export function checkPort(host: string, port: number): number {
  try {
    const probe = Bun.serve({ hostname: host, port, reusePort: false, development: false, fetch: () => new Response() });
    const bound = probe.port!;
    probe.stop(true);
    return bound;
  } catch (error) {
    return failToListen(host, port, error);
  }
}

/** One line naming the port and what is wrong, exit code 2: never a stack trace. */
function failToListen(host: string, port: number, error: unknown): never {
  const code = (error as { code?: string }).code;
  const why =
    code === "EADDRINUSE" ? "is already in use (by another parley or another program); stop it or choose another port with --port"
    : code === "EACCES" ? "needs privileges this user lacks; choose a port above 1023 with --port"
    : code === "EADDRNOTAVAIL" ? `cannot be opened: ${host} is not an address of this machine (--host)`
    : `cannot be opened: ${error instanceof Error ? error.message : String(error)}`;
  process.stderr.write(`parley: port ${port} on ${host} ${why}\n`);
  process.exit(2);
}

/** The one line a script waits for on stdout: where parley listens, its pid, and its upstreams. */
export function printReady(url: string, config: Config): void {
  const providers = configured(config.upstreams.upstreams);
  process.stdout.write(`${JSON.stringify({ event: "ready", url, pid: process.pid, providers })}\n`);
}

export function urlOf(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
