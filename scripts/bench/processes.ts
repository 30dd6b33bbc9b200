import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "../../test/lib/proc.ts";

export const root = resolve(import.meta.dir, "../..");
export const KEY = "sk-bench-key-0123456789";

/**
 * The processes one bench run starts, and its scratch directory (`dir`: wrk scripts, data dirs);
 * `stop` ends every process and removes the directory, unless it was given as `keep`.
 */
export function createFleet(name: string, keep?: string) {
  const dir = keep ?? mkdtempSync(join(tmpdir(), `parley-${name}-`));
  const children: Subprocess[] = [];

  /** A helper server (upstream, hop) that prints `listening PORT` once it is up; `runtime` may add bun flags. */
  async function startHelper(name: string, script: string, env: Record<string, string> = {}, runtime = [process.execPath]) {
    const proc = Bun.spawn([...runtime, script], { cwd: root, env: { ...process.env, ...env }, stdout: "pipe", stderr: "inherit" });
    children.push(proc);
    let seen = "";
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      seen += new TextDecoder().decode(chunk);
      const port = /listening (\d+)/.exec(seen)?.[1];
      if (port) return { url: `http://127.0.0.1:${port}`, proc };
    }
    throw new Error(`${name} did not start: ${seen}`);
  }

  /**
   * `parley serve` as a user runs it (default log level, request log lines written to stderr, here
   * /dev/null), with the rate limit off as in the measurements, against the bench upstream.
   */
  async function startParley(command: string[], upstream: string, extra: Record<string, string> = {}) {
    const port = freePort();
    const proc = Bun.spawn([...command, "serve", "--port", String(port)], {
      cwd: dir,
      env: {
        ...process.env, HOME: dir, PARLEY_DATA_DIR: join(dir, `data-${port}`), PARLEY_CONFIG_DIR: join(dir, "config"),
        API_KEY: KEY, ALPHA_API_KEY: "sk-upstream", ALPHA_BASE_URL: `${upstream}/v1`,
        BETA_REGION: "us-east-1", BETA_ACCESS_KEY_ID: "AKIABENCH", BETA_SECRET_ACCESS_KEY: "bench", BETA_ENDPOINT_URL: upstream,
        // Nothing leaves 127.0.0.1: no model discovery, and the control plane is the bench upstream too.
        RATE_LIMIT_RPM: "0", MODELS_REFRESH_S: "0", BETA_CONTROL_ENDPOINT_URL: upstream,
        ...extra,
      },
      stdout: "ignore",
      stderr: "ignore",
    });
    children.push(proc);
    const url = `http://127.0.0.1:${port}`;
    await waitHealthy(url);
    return { url, proc };
  }

  return {
    dir,
    startHelper,
    /** The bench's fake upstream (scripts/bench/upstream.ts). */
    startUpstream: (env: Record<string, string> = {}) => startHelper("upstream", "scripts/bench/upstream.ts", env),
    /** The reference hop (scripts/bench/hop.ts) in front of `upstream`. */
    startHop: (upstream: string, runtime?: string[]) => startHelper("hop", "scripts/bench/hop.ts", { UPSTREAM: upstream }, runtime),
    startParley,
    adopt: (proc: Subprocess) => children.push(proc),
    stop: () => {
      for (const child of children) child.kill();
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The dashboard's Live page as parley sees it: one client on `/admin/v1/events?last=500` (what the
 * page asks for), reading every event as it comes and keeping none. `events()` counts the
 * `request` events read so far.
 */
export function watchLive(url: string) {
  const stop = new AbortController();
  let events = 0;
  const done = (async () => {
    const response = await fetch(`${url}/admin/v1/events?last=500`, { headers: { authorization: `Bearer ${KEY}` }, signal: stop.signal });
    if (!response.ok || !response.body) throw new Error(`/admin/v1/events answered ${response.status}`);
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      const text = decoder.decode(chunk, { stream: true });
      for (let at = text.indexOf("event: request"); at !== -1; at = text.indexOf("event: request", at + 1)) events++;
    }
  })().catch((error) => {
    if (!stop.signal.aborted) throw error;
  });
  return { events: () => events, stop: () => (stop.abort(), done) };
}

async function waitHealthy(url: string) {
  for (let i = 0; i < 2500; i++) {
    if (await fetch(`${url}/health`).then((r) => r.status < 500, () => false)) return;
    await Bun.sleep(2);
  }
  throw new Error(`${url} never became healthy`);
}

/** A parley.toml in `dir` declaring the bench upstream as an `anthropic` upstream too; its path, for PARLEY_UPSTREAMS. */
export function anthropicUpstream(dir: string, upstream: string): string {
  const file = join(dir, "parley.toml");
  writeFileSync(file, `[upstreams.anthropic]\nkind = "anthropic"\napi_key = "sk-ant-bench"\nbase_url = "${upstream}"\n`);
  return file;
}

export const parleyFromSource = (smol: boolean) => [process.execPath, "--no-env-file", ...(smol ? ["--smol"] : []), join(root, "src/cli.ts")];
