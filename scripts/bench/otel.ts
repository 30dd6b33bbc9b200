/**
 * `bun scripts/bench/otel.ts`: parley's own OTLP encoder (src/telemetry) against the OpenTelemetry
 * JS SDK doing the same work (scripts/bench/otel/{ours,sdk,none}.ts), on three counts:
 *  - per request (a SERVER span, two CLIENT attempts, contract 24's attributes, the three
 *    histograms): the time of the span calls themselves, and the process CPU with export included,
 *    each implementation in its own process, exporting to a collector in another;
 *  - bytes added to a `bun build --compile --minify --bytecode` binary (over the same loop with no
 *    telemetry);
 *  - start-up: the median wall time of that binary set up and exiting.
 * Options: --n N requests per run (20000), --runs R (3; the median is kept).
 *
 * On the shared 2-core machine (load 3 to 5 from other work), --runs 5:
 *   no telemetry                 span calls    0.00   CPU with export    0.06
 *   parley, OTel off             span calls    0.25   CPU with export    0.60
 *   parley, http/protobuf        span calls    2.73   CPU with export   25.09
 *   parley, http/json            span calls    3.29   CPU with export   19.54
 *   OTel JS SDK, http/protobuf   span calls   33.93   CPU with export   76.08
 *   parley's encoder: +84 KiB, start-up 5.2 ms (no telemetry: 5.5 ms)
 *   OTel JS SDK: +3048 KiB, start-up 17.6 ms (no telemetry: 5.5 ms)
 * "CPU with export" counts every thread (Bun's HTTP client, the collector's replies, GC) and
 * moves by ±30% from run to run there; the span calls and the binary sizes are steady.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { n: { type: "string", default: "20000" }, runs: { type: "string", default: "3" } } });
const here = resolve(import.meta.dir, "otel");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const collector = Bun.spawn(
  ["bun", "-e", `const s = Bun.serve({ port: 0, hostname: "127.0.0.1", async fetch(r) { await r.arrayBuffer(); return new Response(new Uint8Array(0), { headers: { "content-type": "application/x-protobuf" } }); } }); console.log(s.port);`],
  { stdout: "pipe" },
);
const { value } = await collector.stdout.getReader().read();
const url = `http://127.0.0.1:${new TextDecoder().decode(value).trim()}`;

const variants = [
  { name: "no telemetry", entry: "none.ts", env: {} },
  { name: "parley, OTel off", entry: "ours.ts", env: { OTEL_OFF: "1" } },
  { name: "parley, http/protobuf", entry: "ours.ts", env: {} },
  { name: "parley, http/json", entry: "ours.ts", env: { OTLP_JSON: "1" } },
  { name: "OTel JS SDK, http/protobuf", entry: "sdk.ts", env: {} },
];

console.log(`per request, median of ${values.runs} runs of ${values.n} requests (µs):`);
// Runs interleaved, so a change in the machine's load falls on every variant alike.
const results = variants.map(() => [] as { hotUs: number; cpuUs: number }[]);
for (let i = 0; i < Number(values.runs); i++)
  variants.forEach((v, j) => {
    const proc = Bun.spawnSync(["bun", join(here, v.entry), "run", url, values.n!], { env: { ...process.env, ...v.env }, stderr: "inherit" });
    results[j]!.push(JSON.parse(proc.stdout.toString()));
  });
for (const [j, v] of variants.entries()) {
  const runs = results[j]!;
  console.log(`  ${v.name.padEnd(28)} span calls ${median(runs.map((r) => r.hotUs)).toFixed(2).padStart(7)}   CPU with export ${median(runs.map((r) => r.cpuUs)).toFixed(2).padStart(7)}`);
}
collector.kill();

const dir = mkdtempSync(join(tmpdir(), "otel-bench-"));
const sizes: Record<string, number> = {};
const startup: Record<string, number> = {};
for (const entry of ["none.ts", "ours.ts", "sdk.ts"]) {
  const outfile = join(dir, entry.replace(".ts", ""));
  const result = await Bun.build({ entrypoints: [join(here, entry)], compile: { outfile, autoloadDotenv: false, autoloadBunfig: false }, minify: true, bytecode: true, format: "esm" });
  if (!result.success) throw new Error(result.logs.join("\n"));
  sizes[entry] = statSync(outfile).size;
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t0 = performance.now();
    Bun.spawnSync([outfile, "startup", "http://127.0.0.1:9"]);
    times.push(performance.now() - t0);
  }
  startup[entry] = median(times);
}
rmSync(dir, { recursive: true, force: true });
console.log("compiled binary (bun build --compile --minify --bytecode):");
for (const entry of ["ours.ts", "sdk.ts"])
  console.log(`  ${entry === "ours.ts" ? "parley's encoder" : "OTel JS SDK"}: +${((sizes[entry]! - sizes["none.ts"]!) / 1024).toFixed(0)} KiB, start-up ${startup[entry]!.toFixed(1)} ms (no telemetry: ${startup["none.ts"]!.toFixed(1)} ms)`);
