/**
 * Load check for the shared rate limit: `bun scripts/load.ts [requests] [concurrency] [workers]`.
 * Starts `parley serve --workers N` with RATE_LIMIT_RPM = 3/4 of the requests, sends them all at the
 * given concurrency, and checks that none is lost and the limit counted exactly across workers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const total = Number(process.argv[2] ?? 2000);
const concurrency = Number(process.argv[3] ?? 64);
const workers = Number(process.argv[4] ?? 2);
const limit = Math.floor(total * 0.75);
const dir = mkdtempSync(join(tmpdir(), "parley-load-"));
const key = "sk-load-check";

const probe = Bun.serve({ port: 0, fetch: () => new Response() });
const port = probe.port!;
probe.stop(true);

const server = Bun.spawn(["bun", "--no-env-file", resolve(import.meta.dir, "../src/cli.ts"), "serve", "--port", String(port), "--workers", String(workers), "--log-level", "warn"], {
  env: { ...process.env, HOME: dir, PARLEY_DATA_DIR: join(dir, "data"), PARLEY_CONFIG_DIR: join(dir, "config"), API_KEY: key, RATE_LIMIT_RPM: String(limit) },
  stdout: "ignore",
  stderr: "inherit",
});
const url = `http://127.0.0.1:${port}`;
for (let i = 0; i < 200 && !(await fetch(`${url}/health`).then((r) => r.ok, () => false)); i++) await Bun.sleep(25);
await Bun.sleep(300); // let every worker come up

const counts = new Map<string, number>();
const latencies: number[] = [];
let next = 0;
const started = performance.now();
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (next < total) {
    next++;
    const t = performance.now();
    const outcome = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } }).then(
      async (r) => (await r.arrayBuffer(), String(r.status)),
      (e) => `error: ${e instanceof Error ? e.message : e}`,
    );
    latencies.push(performance.now() - t);
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  }
}));
const seconds = (performance.now() - started) / 1000;

server.kill("SIGTERM");
await server.exited;
rmSync(dir, { recursive: true, force: true });

latencies.sort((a, b) => a - b);
const ok = counts.get("200") ?? 0;
const limited = counts.get("429") ?? 0;
const lost = total - ok - limited;
console.log(`${total} requests, concurrency ${concurrency}, ${workers} workers, RATE_LIMIT_RPM=${limit}`);
console.log(`  200: ${ok}   429: ${limited}   other/lost: ${lost}   ${[...counts].filter(([s]) => s !== "200" && s !== "429").map(([s, n]) => `${s} x${n}`).join(", ")}`);
console.log(`  ${(total / seconds).toFixed(0)} req/s, p50 ${latencies[Math.floor(total / 2)]!.toFixed(1)} ms, p99 ${latencies[Math.floor(total * 0.99)]!.toFixed(1)} ms`);
const exact = ok === limit && limited === total - limit;
console.log(exact ? "  OK: nothing lost, the limit counted exactly" : "  FAIL: the counts are off");
process.exit(exact ? 0 : 1);
