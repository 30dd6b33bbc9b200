import { watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import type { Subprocess } from "bun";
import type { Logger } from "../log.ts";

export interface SuperviseOptions {
  workers: number;
  /** Arguments for each worker's `serve`, without --workers and --reload. */
  args: string[];
  /** Files whose change restarts the workers (--reload). */
  watch?: string[];
  /** Checks the configuration before a reload; returns an error message when it is bad. */
  validate: () => string | undefined;
  graceMs: number;
  log: Logger;
}

interface Worker {
  index: number;
  proc: Subprocess<"ignore", "inherit", "pipe">;
  ready: Promise<boolean>;
  retiring: boolean;
}

const RESTART_DELAY_MS = 500;

/** This program again: the binary itself, or `bun <entry script>` (keeping --smol) from source. */
function self(): string[] {
  const compiled = Bun.main.startsWith("/$bunfs/") || /^[A-Z]:[\\/]~BUN[\\/]/i.test(Bun.main);
  return compiled ? [process.execPath] : [process.execPath, "--no-env-file", ...process.execArgv.filter((flag) => flag === "--smol"), Bun.main];
}

/**
 * Runs N worker processes on one port (reusePort), restarts any that crash, replaces them all
 * when a watched configuration file changes (new ones first, then the old ones drain), and stops
 * them all on SIGINT/SIGTERM.
 */
export function supervise(options: SuperviseOptions): void {
  const { log } = options;
  let workers: Worker[] = [];
  let stopping = false;
  let generation = 0;

  function spawn(index: number): Worker {
    const proc = Bun.spawn([...self(), "serve", ...options.args, "--worker", String(index)], {
      stdin: "ignore",
      stdout: "inherit",
      stderr: "pipe",
      env: process.env,
      onExit(_proc, code) {
        if (stopping || worker.retiring) return;
        log.warn(`worker ${index} exited (code ${code}); restarting it`);
        setTimeout(() => {
          if (stopping || worker.retiring) return;
          workers = workers.map((w) => (w === worker ? spawn(index) : w));
        }, RESTART_DELAY_MS);
      },
    });
    const worker: Worker = { index, proc, ready: forward(proc.stderr), retiring: false };
    return worker;
  }

  const startAll = () => Array.from({ length: options.workers }, (_, i) => spawn(i + 1));

  async function reload() {
    const problem = options.validate();
    if (problem) return log.error(`configuration changed but is invalid, keeping the running workers: ${problem}`);
    const mine = ++generation;
    log.info("configuration changed: starting new workers");
    const fresh = startAll();
    const ok = await Promise.all(fresh.map((w) => w.ready));
    if (mine !== generation || stopping) return;
    if (!ok.every(Boolean)) {
      for (const w of fresh) (w.retiring = true), w.proc.kill("SIGTERM");
      return log.error("the new workers did not start; keeping the running ones");
    }
    const old = workers;
    workers = fresh;
    for (const w of old) (w.retiring = true), w.proc.kill("SIGTERM");
    log.info("reloaded: old workers are finishing their in-flight requests");
  }

  async function stop(signal: string) {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: stopping ${workers.length} worker(s)`);
    for (const w of workers) w.proc.kill("SIGTERM");
    const exited = Promise.all(workers.map((w) => w.proc.exited));
    const late = Bun.sleep(options.graceMs + 2000).then(() => "late" as const);
    if ((await Promise.race([exited, late])) === "late") for (const w of workers) w.proc.kill("SIGKILL");
    watchers.forEach((w) => w.close());
    process.exit(0);
  }

  workers = startAll();
  const watchers = (options.watch ?? []).flatMap((file) => watchFile(file, debounce(() => void reload(), 200)));
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

/** Copies a worker's log lines to our stderr; resolves true once it is listening, false if it ends first. */
function forward(stream: ReadableStream<Uint8Array>): Promise<boolean> {
  return new Promise((resolve) => {
    let seen = "";
    (async () => {
      for await (const chunk of stream) {
        process.stderr.write(chunk);
        if (seen !== "ready") {
          seen += new TextDecoder().decode(chunk);
          if (seen.includes("listening on")) (seen = "ready"), resolve(true);
        }
      }
      resolve(false);
    })().catch(() => resolve(false));
  });
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
