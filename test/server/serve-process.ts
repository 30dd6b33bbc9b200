import { readdirSync, readFileSync } from "node:fs";
import { CLI } from "../lib/cli.ts";

export interface Ready {
  event: string;
  url: string;
  pid: number;
  providers: Record<string, string>;
}

/**
 * Starts `parley serve` as a script would, with no terminal, and resolves with the ready line it
 * prints on stdout. stderr is collected for the test to read.
 */
export async function serve(args: string[], options: { env: Record<string, string | undefined>; cwd: string }) {
  const proc = Bun.spawn(["bun", "--no-env-file", CLI, "serve", ...args], { cwd: options.cwd, env: options.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let stderr = "";
  let stdout = "";
  const decoder = new TextDecoder();
  const errDone = (async () => {
    for await (const chunk of proc.stderr) stderr += decoder.decode(chunk);
  })();
  const outDone = (async () => {
    for await (const chunk of proc.stdout) stdout += new TextDecoder().decode(chunk);
  })();
  const deadline = Date.now() + 30_000;
  while (!stdout.includes("\n")) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`no ready line (exit ${proc.exitCode}): ${stdout}${stderr}`);
    await Bun.sleep(20);
  }
  const ready = JSON.parse(stdout.slice(0, stdout.indexOf("\n"))) as Ready;
  return {
    ready,
    proc,
    stderr: () => stderr,
    stdout: () => stdout,
    async waitFor(pattern: RegExp, ms = 30_000) {
      const until = Date.now() + ms;
      while (!pattern.test(stderr)) {
        if (Date.now() > until) throw new Error(`never saw ${pattern}: ${stderr}`);
        await Bun.sleep(20);
      }
    },
    async stop() {
      if (proc.exitCode === null) proc.kill("SIGTERM");
      const code = await proc.exited;
      await Promise.all([errDone, outDone]);
      return code;
    },
  };
}

/** Runs `parley serve` expecting it to fail at start; resolves with what it printed. */
export async function serveFails(args: string[], options: { env: Record<string, string | undefined>; cwd: string }) {
  const proc = Bun.spawn(["bun", "--no-env-file", CLI, "serve", ...args], { cwd: options.cwd, env: options.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { stdout, stderr, code };
}

/** Pids whose parent is `pid`, read from /proc. */
export function childrenOf(pid: number): number[] {
  return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).filter((d) => {
    try {
      // Field 4 of /proc/PID/stat, after the command name in parentheses.
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
    } catch {
      return false;
    }
  }).map(Number);
}

export function alive(pid: number): boolean {
  try {
    // A zombie has exited; only its parent has not collected it yet.
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/** Polls until `check` holds, or fails after `ms` with the last value seen. */
export async function eventually<T>(probe: () => T | Promise<T>, check: (value: T) => boolean, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (check(value)) return value;
    if (Date.now() > until) throw new Error(`condition never held; last value: ${JSON.stringify(value)}`);
    await Bun.sleep(50);
  }
}
