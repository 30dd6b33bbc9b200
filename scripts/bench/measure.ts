import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cpuSeconds, rssMb } from "../../test/lib/proc.ts";

/** One kind of request: where it goes and what it sends. */
export interface Target {
  name: string;
  url: string;
  body: string;
  headers: Record<string, string>;
}

export async function once(t: Target): Promise<number> {
  const started = performance.now();
  const response = await fetch(t.url, { method: "POST", body: t.body, headers: t.headers });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${t.name}: status ${response.status}`);
  return performance.now() - started;
}

export const median = (xs: number[]) => quantile(xs, 0.5);

export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  const low = Math.floor(at);
  return s[low]! + (s[Math.min(low + 1, s.length - 1)]! - s[low]!) * (at - low);
}

/**
 * Latency at concurrency 1, in ms. Requests go to the targets in turn, one at a time, so all see the
 * same moment's noise and get the same share of calls (a process called more often stays warmer).
 * p50 is the median of the rounds' medians; p99 is taken over every request of the run.
 */
export async function latency(targets: Target[], rounds: number, perRound: number): Promise<Record<string, { p50: number; p99: number }>> {
  for (let i = 0; i < 100; i++) for (const t of targets) await once(t);
  const medians: number[][] = targets.map(() => []);
  const all: number[][] = targets.map(() => []);
  for (let r = 0; r < rounds; r++) {
    const times: number[][] = targets.map(() => []);
    for (let i = 0; i < perRound; i++) {
      for (let j = 0; j < targets.length; j++) {
        const k = (i + j) % targets.length;
        times[k]!.push(await once(targets[k]!));
      }
    }
    times.forEach((xs, k) => {
      medians[k]!.push(median(xs));
      all[k]!.push(...xs);
    });
  }
  return Object.fromEntries(targets.map((t, k) => [t.name, { p50: median(medians[k]!), p99: quantile(all[k]!, 0.99) }]));
}

/** What a load run did: requests answered, seconds it took, CPU seconds the serving process used, its peak RSS. */
export interface Load {
  requests: number;
  seconds: number;
  cpu: number;
  peakRss: number;
}

export const wrk = Bun.which("wrk");

/**
 * `connections` clients sending `t` back to back for `seconds`: with wrk (1 thread, so the server
 * keeps most of the 2nd core) when installed, else keep-alive fetch loops in this process.
 * `pid` is the serving process whose CPU time (/proc) and RSS are taken over the run.
 */
export async function load(t: Target, pid: number, connections: number, seconds: number, scratch: string): Promise<Load> {
  let peakRss = rssMb(pid);
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(pid))), 100);
  const cpuBefore = cpuSeconds(pid);
  try {
    const { requests, seconds: took } = wrk ? await runWrk(t, connections, seconds, scratch) : await fetchLoop(t, connections, seconds);
    return { requests, seconds: took, cpu: cpuSeconds(pid) - cpuBefore, peakRss: Math.max(peakRss, rssMb(pid)) };
  } finally {
    clearInterval(sampler);
  }
}

async function runWrk(t: Target, connections: number, seconds: number, scratch: string) {
  const script = join(scratch, `${t.name.replace(/\W+/g, "-")}.lua`);
  const headers = Object.entries(t.headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`).join("\n");
  writeFileSync(script, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(t.body)}\n${headers}\n`);
  const proc = Bun.spawn([wrk!, "-t1", `-c${connections}`, `-d${seconds}s`, "-s", script, t.url], { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  if (/Non-2xx/.test(out)) throw new Error(`${t.name}: non-2xx answers under load\n${out}`);
  const done = /(\d+) requests in ([\d.]+)(m?s)/.exec(out);
  if (!done) throw new Error(`${t.name}: wrk said\n${out}`);
  return { requests: Number(done[1]), seconds: Number(done[2]) / (done[3] === "ms" ? 1000 : 1) };
}

async function fetchLoop(t: Target, connections: number, seconds: number) {
  let requests = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < until) {
      await once(t);
      requests++;
    }
  }));
  return { requests, seconds: (performance.now() - started) / 1000 };
}

/** Several load runs of one process as one: requests per second and CPU µs per request over all of them. */
export function total(runs: Load[]) {
  const requests = runs.reduce((n, r) => n + r.requests, 0);
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  const cpu = runs.reduce((n, r) => n + r.cpu, 0);
  return { rps: requests / seconds, cpuUs: (cpu / requests) * 1e6, requests, peakRss: Math.max(0, ...runs.map((r) => r.peakRss)) };
}
