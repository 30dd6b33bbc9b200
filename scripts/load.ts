/**
 * Load check for the shared rate limit:
 *   bun scripts/load.ts [requests] [concurrency] [workers] [--instances N]
 * Starts `parley serve --workers W` with RATE_LIMIT_RPM = 3/4 of the requests, sends them all at the
 * given concurrency, and checks that none is lost and the limit counted exactly. With --instances N
 * it starts N such gateways, each with its own data directory, sharing one Redis (a redis-server
 * started here on a free port), and spreads the requests over them as a load balancer would.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { freePort } from "../test/lib/proc.ts";
import { startRedis, withinOneWindow, type TestRedis } from "../test/lib/redis.ts";

const { values, positionals } = parseArgs({ args: Bun.argv.slice(2), options: { instances: { type: "string" } }, allowPositionals: true });
const total = Number(positionals[0] ?? 2000);
const concurrency = Number(positionals[1] ?? 64);
const workers = Number(positionals[2] ?? 2);
const instances = values.instances === undefined ? undefined : Number(values.instances);
if (instances !== undefined && !(Number.isInteger(instances) && instances >= 1)) throw new Error("--instances takes a whole number from 1");
const limit = Math.floor(total * 0.75);
const key = "sk-load-check-0123456789";
const dirs: string[] = [];

const redis: TestRedis | undefined = instances === undefined ? undefined : await startRedis();
const gateways = await Promise.all(Array.from({ length: instances ?? 1 }, () => startGateway()));
await withinOneWindow(15); // the limit is per minute: a run must not span two

const counts = new Map<string, number>();
const perGateway = gateways.map(() => new Map<string, number>());
const latencies: number[] = [];
let next = 0;
const started = performance.now();
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (next < total) {
    const target = next++ % gateways.length;
    const t = performance.now();
    const outcome = await fetch(`${gateways[target]!.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } }).then(
      async (r) => (await r.arrayBuffer(), String(r.status)),
      (e) => `error: ${e instanceof Error ? e.message : e}`,
    );
    latencies.push(performance.now() - t);
    for (const tally of [counts, perGateway[target]!]) tally.set(outcome, (tally.get(outcome) ?? 0) + 1);
  }
}));
const seconds = (performance.now() - started) / 1000;

const trips = redis ? await scriptCalls(redis) : undefined;
for (const gateway of gateways) gateway.process.kill("SIGTERM");
await Promise.all(gateways.map((gateway) => gateway.process.exited));
await redis?.kill();
for (const dir of dirs) rmSync(dir, { recursive: true, force: true });

latencies.sort((a, b) => a - b);
const ok = counts.get("200") ?? 0;
const limited = counts.get("429") ?? 0;
const lost = total - ok - limited;
const others = (tally: Map<string, number>) => [...tally].filter(([s]) => s !== "200" && s !== "429").map(([s, n]) => `${s} x${n}`).join(", ");
const counting = redis ? `${gateways.length} gateways on one Redis, ${workers} workers each` : `${workers} workers on SQLite`;
console.log(`${total} requests, concurrency ${concurrency}, ${counting}, RATE_LIMIT_RPM=${limit}`);
console.log(`  200: ${ok}   429: ${limited}   other/lost: ${lost}   ${others(counts)}`);
if (gateways.length > 1) {
  perGateway.forEach((tally, i) => console.log(`  gateway ${i + 1}: 200: ${tally.get("200") ?? 0}   429: ${tally.get("429") ?? 0}   ${others(tally)}`));
}
if (trips !== undefined) console.log(`  Redis round trips for the limit: ${trips} (${(total / trips).toFixed(1)} requests each)`);
console.log(`  ${(total / seconds).toFixed(0)} req/s, p50 ${latencies[Math.floor(total / 2)]!.toFixed(1)} ms, p99 ${latencies[Math.floor(total * 0.99)]!.toFixed(1)} ms`);
const exact = ok === limit && limited === total - limit;
console.log(exact ? "  OK: nothing lost, the limit counted exactly" : "  FAIL: the counts are off");
process.exit(exact ? 0 : 1);

/** One `parley serve` with its own data directory, ready once /health answers. */
async function startGateway() {
  const dir = mkdtempSync(join(tmpdir(), "parley-load-"));
  dirs.push(dir);
  const port = freePort();
  const proc = Bun.spawn(["bun", "--no-env-file", resolve(import.meta.dir, "../src/cli.ts"), "serve", "--port", String(port), "--workers", String(workers), "--log-level", "warn"], {
    env: {
      ...Bun.env, HOME: dir, PARLEY_DATA_DIR: join(dir, "data"), PARLEY_CONFIG_DIR: join(dir, "config"), API_KEY: key, RATE_LIMIT_RPM: String(limit),
      ...(redis ? { REDIS_URL: redis.url } : {}),
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200 && !(await fetch(`${url}/health`).then((r) => r.ok, () => false)); i++) await Bun.sleep(25);
  await Bun.sleep(300); // let every worker come up
  return { url, process: proc };
}

/** How many times the gateways ran the counting script: the Redis cost of the limit. */
async function scriptCalls(redis: TestRedis): Promise<number> {
  const client = await redis.client();
  const stats = String(await client.send("INFO", ["commandstats"]));
  client.close();
  return ["evalsha", "eval"].reduce((sum, name) => sum + Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0), 0);
}
