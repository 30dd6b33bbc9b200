import { watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import type { Subprocess } from "bun";
import type { Logger } from "../log.ts";
import { ORPHAN_GRACE_MS, watchParent } from "./parent.ts";
import type { WorkerMessage } from "./serve.ts";

export interface SuperviseOptions {
  workers: number;
  /** Arguments for each worker's `serve`, without --workers and --reload. */
  args: string[];
  /** Files whose change restarts the workers (--reload). */
  watch?: string[];
  /** Checks the configuration before a reload; returns an error message when it is bad. */
  validate: () => string | undefined;
  graceMs: number;
  /** Stop (workers too) within 2 s of the process that started the supervisor dying. */
  exitWithParent?: boolean;
  log: Logger;
  /** Called once, when every first worker is serving. */
  onReady?: () => void;
}

interface Worker {
  index: number;
  proc: Subprocess;
  /** True once the worker reports (over IPC) that it is listening; false if it exits or hangs first. */
  ready: Promise<boolean>;
  /** Once it no longer accepts connections (it said so over IPC, or exited). */
  closed: Promise<void>;
}

const RESTART_DELAY_MS = 500;
/** A worker that has not said it is ready by then is taken as failed. */
const READY_TIMEOUT_MS = 30_000;
/** After the grace period, a worker that has still not exited is killed. */
const KILL_AFTER_MS = 2_000;
/** The same once the parent is gone: all of it must be over within 2 s. */
const ORPHAN_KILL_AFTER_MS = 300;

/** This program again: the binary itself, or `bun <entry script>` (keeping --smol) from source. */
function self(): string[] {
  const compiled = Bun.main.startsWith("/$bunfs/") || /^[A-Z]:[\\/]~BUN[\\/]/i.test(Bun.main);
  return compiled ? [process.execPath] : [process.execPath, "--no-env-file", ...process.execArgv.filter((flag) => flag === "--smol"), Bun.main];
}

/**
 * Runs N worker processes on one port (reusePort), restarts any that crash, replaces them all
 * when a watched configuration file changes (new ones first, then the old ones drain), and stops
 * them all on SIGINT/SIGTERM. Readiness and stopping go over IPC; every worker ever started is
 * tracked until it exits, and a worker whose supervisor dies stops by itself (serve.ts).
 */
export function supervise(options: SuperviseOptions): void {
  const { log } = options;
  /** Every worker started that has not exited yet: serving, starting or draining. */
  const live = new Set<Worker>();
  /** The generation that serves; a crashed one of these is replaced. */
  let serving: Worker[] = [];
  let stopping = false;
  let generation = 0;
  let watchers: FSWatcher[] = [];

  function spawn(index: number): Worker {
    let settle: (ok: boolean) => void = () => {};
    const ready = new Promise<boolean>((resolve) => (settle = resolve));
    let close: () => void = () => {};
    const closed = new Promise<void>((resolve) => (close = resolve));
    const proc = Bun.spawn([...self(), "serve", ...options.args, "--worker", String(index)], {
      stdin: "ignore",
      stdout: "inherit",
      stderr: "inherit",
      env: process.env,
      serialization: "json",
      ipc(message: WorkerMessage) {
        if (message?.type === "ready") settle(true);
        else if (message?.type === "closed") close();
      },
      onExit(_proc, code, signal) {
        live.delete(worker);
        settle(false);
        close();
        if (stopping || !serving.includes(worker)) return;
        log.warn(`worker ${index} exited (${signal ?? `code ${code}`}); restarting it`);
        setTimeout(() => {
          if (stopping || !serving.includes(worker)) return;
          serving = serving.map((w) => (w === worker ? spawn(index) : w));
        }, RESTART_DELAY_MS);
      },
    });
    const timeout = setTimeout(() => settle(false), READY_TIMEOUT_MS);
    void ready.then(() => clearTimeout(timeout));
    const worker: Worker = { index, proc, ready, closed };
    live.add(worker);
    return worker;
  }

  const startAll = () => Array.from({ length: options.workers }, (_, i) => spawn(i + 1));
  const allReady = async (workers: Worker[]) => (await Promise.all(workers.map((w) => w.ready))).every(Boolean);

  /**
   * Asks workers to finish their in-flight requests and exit; kills those still there after the
   * grace. Done once none of them accepts connections any more (each says so, or exits).
   */
  function retire(workers: Worker[]): Promise<void> {
    for (const worker of workers) {
      tell(worker, { type: "stop" });
      setTimeout(() => live.has(worker) && worker.proc.kill("SIGKILL"), options.graceMs + KILL_AFTER_MS).unref();
    }
    return Promise.all(workers.map((w) => w.closed)).then(() => undefined);
  }

  async function reload() {
    if (stopping) return;
    const problem = options.validate();
    if (problem) return log.error(`configuration changed but is invalid, keeping the running workers: ${problem}`);
    const mine = ++generation;
    log.info("configuration changed: starting new workers");
    const fresh = startAll();
    const ok = await allReady(fresh);
    if (stopping) return;
    if (mine !== generation) {
      void retire(fresh);
      return log.info("a newer configuration change superseded this reload; its workers are stopped");
    }
    if (!ok) {
      void retire(fresh);
      return log.error("the new workers did not start; keeping the running ones");
    }
    const old = serving;
    serving = fresh;
    // Said once the old workers take no new connection: from then on every request sees the new configuration.
    await retire(old);
    log.info("reloaded: old workers are finishing their in-flight requests");
  }

  /** `quick`: the parent is gone, so workers get ORPHAN_GRACE_MS and are killed soon after. */
  async function stop(reason: string, code = 0, quick = false) {
    if (stopping) return;
    stopping = true;
    watchers.forEach((w) => w.close());
    const all = [...live];
    log.info(`${reason}: stopping ${all.length} worker(s)`);
    const graceMs = quick ? Math.min(options.graceMs, ORPHAN_GRACE_MS) : options.graceMs;
    for (const worker of all) tell(worker, { type: "stop", graceMs });
    const exited = Promise.all(all.map((w) => w.proc.exited));
    const late = Bun.sleep(graceMs + (quick ? ORPHAN_KILL_AFTER_MS : KILL_AFTER_MS)).then(() => "late" as const);
    if ((await Promise.race([exited, late])) === "late") for (const worker of live) worker.proc.kill("SIGKILL");
    process.exit(code);
  }

  /**
   * Ready once every serving worker is. A first worker that exits by itself (port taken meanwhile,
   * a bad host) will not do better on a restart; one killed by a signal is a crash, and its
   * replacement is waited for.
   */
  async function firstStart(): Promise<Worker | undefined> {
    for (let round = 0; round < 5; round++) {
      const current = serving;
      if (await allReady(current)) return undefined;
      const failed = current.find((w) => w.proc.signalCode === null && w.proc.exitCode !== null && w.proc.exitCode !== 0);
      if (failed || stopping) return failed ?? current[0];
      await Bun.sleep(RESTART_DELAY_MS + 100);
    }
    return serving[0];
  }

  serving = startAll();
  void firstStart().then((failed) => {
    if (stopping) return;
    if (!failed) return options.onReady?.();
    log.error("the workers did not start");
    void stop("start-up failed", failed.proc.exitCode || 1);
  });
  watchers = (options.watch ?? []).flatMap((file) => watchFile(file, debounce(() => void reload(), 200)));
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  // Each worker reloads its upstreams file on SIGHUP: pass it on.
  process.on("SIGHUP", () => {
    for (const worker of live) worker.proc.kill("SIGHUP");
  });
  if (options.exitWithParent) watchParent(() => void stop("the process that started parley is gone", 0, true));
}

/** Over IPC; a worker whose channel is already gone gets the signal instead. */
function tell(worker: Worker, message: WorkerMessage): void {
  try {
    worker.proc.send(message);
  } catch {
    worker.proc.kill("SIGTERM");
  }
}

/** Watches the file's directory, so that a file created, replaced or renamed into place is seen. */
function watchFile(file: string, onChange: () => void): FSWatcher[] {
  try {
    return [watch(dirname(file), (_event, name) => {
      if (name === basename(file)) onChange();
    })];
  } catch {
    return [];
  }
}

function debounce(fn: () => void, ms: number): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
}
