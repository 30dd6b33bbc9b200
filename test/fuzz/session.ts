import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCli } from "../lib/cli.ts";
import { startFaultyUpstream } from "../lib/faulty-upstream.ts";
import { FUZZ_ALIASES, FUZZ_FALLBACKS, FUZZ_ROUTES } from "./cases.ts";
import { mask } from "./check.ts";
import type { Send } from "./run.ts";
import { rssMb } from "../lib/proc.ts";

/** Known secrets the server is given: none may show up in a response or a log line. */
export const SECRETS = {
  API_KEY: "sk-fuzz-client-key-7f3a9c1e5b",
  ALPHA_API_KEY: "sk-fuzz-upstream-openai-4d8e2b6a0c",
  BETA_ACCESS_KEY_ID: "AKIAFUZZFUZZFUZZ7Q2W",
  BETA_SECRET_ACCESS_KEY: "fuzz-bedrock-secret-9e1d5c3b7a",
};
export const MAX_UPLOAD_BYTES = 1024 * 1024;
/** Short, so that stalls end quickly: every stall case costs about twice this (one retry). */
export const UPSTREAM_TIMEOUT_MS = 400;

/** Everything but the keys and the upstream URLs: the settings every fuzz server runs with. */
export function fuzzEnv(dir: string): Record<string, string> {
  return {
    API_KEY: SECRETS.API_KEY,
    ALPHA_API_KEY: SECRETS.ALPHA_API_KEY,
    BETA_REGION: "us-east-1",
    BETA_ACCESS_KEY_ID: SECRETS.BETA_ACCESS_KEY_ID,
    BETA_SECRET_ACCESS_KEY: SECRETS.BETA_SECRET_ACCESS_KEY,
    PARLEY_DATA_DIR: join(dir, "data"),
    PARLEY_CONFIG_DIR: join(dir, "config"),
    UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
    UPSTREAM_RETRIES: "1",
    RATE_LIMIT_RPM: "0",
    MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES),
    // An endless upstream reply is cut here (the fault `endless`), not at the default 64 MiB.
    UPSTREAM_MAX_BYTES: String(4 * 1024 * 1024),
    MODEL_ALIASES: FUZZ_ALIASES,
    MODEL_ROUTES: FUZZ_ROUTES,
    MODEL_FALLBACKS: FUZZ_FALLBACKS,
  };
}

export { rssMb };

/** `parley serve` as a real process, LOG_LEVEL=debug, wired to the faulty upstream. */
export async function startSession() {
  const upstream = await startFaultyUpstream();
  const dir = mkdtempSync(join(tmpdir(), "parley-fuzz-"));
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, ".config"),
    XDG_DATA_HOME: join(dir, ".data"),
    AWS_EC2_METADATA_DISABLED: "true",
    ...fuzzEnv(dir),
    ALPHA_BASE_URL: upstream.openaiUrl,
    BETA_ENDPOINT_URL: upstream.bedrockUrl,
    LOG_LEVEL: "debug",
  };
  // The server goes with the harness, however the harness ends (a timeout, Ctrl+C).
  const server = await startCli(["--exit-with-parent"], { env, cwd: dir });
  const send: Send = (request) => {
    const url = new URL(request.url);
    return fetch(server.url + url.pathname + url.search, { method: request.method, headers: request.headers, body: request.body, redirect: "manual" });
  };
  let peak = 0;
  const sampler = setInterval(() => {
    if (server.proc.exitCode === null) peak = Math.max(peak, rssMb(server.proc.pid));
  }, 50);
  return {
    url: server.url,
    send,
    upstream,
    dataDir: join(dir, "data"),
    rss: () => rssMb(server.proc.pid),
    peakRss: () => peak,
    logs: server.output,
    alive: () => server.proc.exitCode === null,
    async stop() {
      clearInterval(sampler);
      upstream.stop();
      if (server.proc.exitCode === null) await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type Session = Awaited<ReturnType<typeof startSession>>;

/**
 * What must hold once the run is over: the server still serves, its log holds no secret and no
 * stack trace, the upstream has no connection left open, and no upload left bytes behind.
 */
export async function afterRun(session: Session): Promise<string[]> {
  const problems: string[] = [];
  if (!session.alive()) problems.push("the server process died");
  else {
    const health = await fetch(`${session.url}/health`).catch(() => undefined);
    if (health?.status !== 200) problems.push(`the server no longer answers /health (${health?.status ?? "no answer"})`);
  }
  const logs = session.logs();
  for (const secret of Object.values(SECRETS)) if (logs.includes(secret)) problems.push(`secret ${mask(secret)} in the server's log`);
  const traces = logs.split("\n").filter((line) => /^\s+at .+(:\d+:\d+\)?|\(native\))$/.test(line));
  if (traces.length) problems.push(`stack trace in the server's log: ${traces.slice(0, 3).join(" | ")}`);
  const bugs = logs.split("\n").filter((line) => /failed:|Unhandled|uncaught/i.test(line));
  if (bugs.length) problems.push(`errors in the server's log: ${bugs.slice(0, 5).join(" | ")}`);
  // A call the gateway gave up on is closed by Bun's idle timer for fetch, which fires seconds
  // late (its granularity is coarse): wait for that, so only a connection held for good counts.
  for (let i = 0; i < 100 && session.upstream.open() > 0; i++) await Bun.sleep(200);
  if (session.upstream.open() > 0) problems.push(`${session.upstream.open()} upstream connection(s) still open after the run`);
  problems.push(...leftovers(session.dataDir));
  return problems;
}

/** Staged parts, or bytes without metadata (or the reverse), in the local file store. */
function leftovers(dataDir: string): string[] {
  const files = join(dataDir, "files");
  let names: string[];
  try {
    names = readdirSync(files);
  } catch {
    return [];
  }
  const problems: string[] = [];
  const parts = names.filter((n) => n.endsWith(".part"));
  if (parts.length) problems.push(`${parts.length} staged upload(s) left behind: ${parts.slice(0, 3).join(", ")}`);
  for (const name of names.filter((n) => /^file-[A-Za-z0-9]{24}$/.test(n))) {
    if (!names.includes(`${name}.json`)) problems.push(`bytes without metadata: ${name}`);
    else if (statSync(join(files, name)).size === 0) problems.push(`empty stored file: ${name}`);
  }
  for (const name of names.filter((n) => n.endsWith(".json"))) if (!names.includes(name.slice(0, -5))) problems.push(`metadata without bytes: ${name}`);
  return problems;
}
