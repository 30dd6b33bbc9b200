import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const CLI = resolve(import.meta.dir, "../../src/cli.ts");

/** A fresh working directory with its own HOME: what a new user has. */
export function userDir() {
  const dir = mkdtempSync(join(tmpdir(), "parley-cli-"));
  return { dir, env: { ...process.env, HOME: dir, XDG_CONFIG_HOME: join(dir, ".config"), XDG_DATA_HOME: join(dir, ".data") } };
}

/** Runs `parley ARGS` without a terminal: stdin is empty, or `options.stdin` piped in. */
export async function runCli(args: string[], options: { env?: Record<string, string | undefined>; cwd?: string; stdin?: string } = {}) {
  const stdin = options.stdin === undefined ? "ignore" : new Blob([options.stdin]);
  const proc = Bun.spawn(["bun", "--no-env-file", CLI, ...args], { cwd: options.cwd, env: options.env, stdout: "pipe", stderr: "pipe", stdin });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** Runs `parley ARGS` and lets a test watch its stdout while it is still running. */
export function watchCli(args: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}) {
  const proc = Bun.spawn(["bun", "--no-env-file", CLI, ...args], { cwd: options.cwd, env: options.env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  let stdout = "";
  const decoder = new TextDecoder();
  const reading = (async () => {
    for await (const chunk of proc.stdout) stdout += decoder.decode(chunk, { stream: true });
  })();
  return {
    proc,
    stdout: () => stdout,
    async waitFor(text: string, ms = 30_000) {
      const deadline = Date.now() + ms;
      while (!stdout.includes(text)) {
        if (proc.exitCode !== null) await reading;
        if (stdout.includes(text)) return;
        if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`never saw ${JSON.stringify(text)} on stdout: ${JSON.stringify(stdout)}`);
        await Bun.sleep(10);
      }
    },
    async done() {
      const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited, reading]);
      return { stdout, stderr, code };
    },
  };
}

/** Starts `parley serve` on a free port and resolves once it answers /health. */
export async function startCli(args: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}) {
  const proc = Bun.spawn(["bun", "--no-env-file", CLI, "serve", "--port", "0", ...args], { cwd: options.cwd, env: options.env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  let output = "";
  const decoder = new TextDecoder();
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) output += decoder.decode(chunk);
  };
  const done = Promise.all([collect(proc.stdout), collect(proc.stderr)]);
  // Starting takes well under a second alone, many seconds on a busy machine.
  const deadline = Date.now() + 30_000;
  let url: string | undefined;
  while (!url && Date.now() < deadline) {
    url = /(?:listening on|workers?\) on) (http:\/\/\S+?)[\s,]/.exec(output)?.[1];
    if (!url) await Bun.sleep(20);
    if (proc.exitCode !== null) throw new Error(`parley serve exited ${proc.exitCode}: ${output}`);
  }
  if (!url) throw new Error(`parley serve did not start: ${output}`);
  return {
    url,
    proc,
    output: () => output,
    /** Resolves once the output matches, or fails after `ms`. */
    async waitFor(pattern: RegExp, ms = 30_000) {
      const deadline = Date.now() + ms;
      while (!pattern.test(output)) {
        if (Date.now() > deadline) throw new Error(`never saw ${pattern}: ${output}`);
        await Bun.sleep(20);
      }
    },
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      await done;
      return output;
    },
  };
}
