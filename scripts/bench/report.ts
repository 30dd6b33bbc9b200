/** The bench's figures as Markdown tables (docs/performance.md takes them as printed). */

type Targets = Record<string, { p50?: number; p99: number; rps: number; cpu?: number } | undefined>;
type Latency = Record<string, { p50: number; p99: number }>;
interface Total { rps: number; cpuUs: number; requests: number; peakRss: number }
interface PathResult {
  kind: string;
  skipped?: string;
  latency: Latency;
  /** The first path only: the same latency rounds on the fresh server, before its warm-up load. */
  cold_latency?: Latency;
  load: Record<string, { passes: { hop: Total; parley: Total }; interleaved: { hop: Total; parley: Total } }>;
  cpu: { hop_us: number; parley_us: number; floor_us?: number; beside_floor_us?: number; floor_limit?: number };
}

const us = (ms: number) => `${(ms * 1000).toFixed(0)}`;
const k = (rps: number) => (rps >= 10_000 ? `${(rps / 1000).toFixed(1)}k` : rps.toFixed(0));
/** "ok"/"MISS" against a ratio that must stay at most (or, for `atLeast`, at least) `limit`. */
const verdict = (ratio: number, limit: number | undefined, atLeast = false) =>
  limit === undefined ? "" : (atLeast ? ratio >= limit : ratio <= limit) ? ` ok (${atLeast ? "≥" : "≤"} ${limit}x)` : ` **MISS** (${atLeast ? "≥" : "≤"} ${limit}x)`;

export function report(results: Record<string, any>, targets: Targets, tool: string): string {
  const lines: string[] = [];
  const out = (line = "") => lines.push(line);
  out(`parley bench · ${results.date} · ${results.machine.cpus} cores · bun ${results.machine.bun} · load: ${tool}${results.quick ? " · quick" : ""}`);
  out();
  out("Every ratio is parley / reference hop in the same run. Added latency = the path's median minus the direct call's, at concurrency 1,");
  out("after a 1 s load of each server on that path (a server that has been up a while; the fresh server's figures follow the table).");
  out();
  out("| path | added p50, µs (hop) | p99 at c=1, µs (hop) | req/s c=32 passes (hop) | c=32 interleaved | c=128 passes | c=128 interleaved | CPU µs/request (hop) |");
  out("|---|---|---|---|---|---|---|---|");
  for (const [label, raw] of Object.entries(results.paths as Record<string, PathResult>)) {
    if (raw.skipped) {
      out(`| ${label} | ${raw.skipped} | | | | | | |`);
      continue;
    }
    const t = targets[raw.kind];
    const lat = raw.latency;
    const parleyName = Object.keys(lat).find((name) => name !== "direct" && name !== "hop")!;
    const added = lat[parleyName]!.p50 - lat.direct!.p50;
    const hopAdded = lat.hop!.p50 - lat.direct!.p50;
    const p50 = `${us(added)} (${us(hopAdded)}) ${(added / hopAdded).toFixed(2)}x${verdict(added / hopAdded, t?.p50)}`;
    const p99Ratio = lat[parleyName]!.p99 / lat.hop!.p99;
    const p99 = `${us(lat[parleyName]!.p99)} (${us(lat.hop!.p99)}) ${p99Ratio.toFixed(2)}x${verdict(p99Ratio, t?.p99)}`;
    const rps = (c: string, mode: "passes" | "interleaved", withTarget: boolean, withHop: boolean) => {
      const run = raw.load[c]![mode];
      const ratio = run.parley.rps / run.hop.rps;
      return `${k(run.parley.rps)}${withHop ? ` (${k(run.hop.rps)})` : ""} ${ratio.toFixed(2)}x${withTarget ? verdict(ratio, t?.rps, true) : ""}`;
    };
    const cpuRatio = raw.cpu.parley_us / raw.cpu.hop_us;
    const cpu = `${raw.cpu.parley_us.toFixed(0)} (${raw.cpu.hop_us.toFixed(0)}) ${cpuRatio.toFixed(2)}x${verdict(cpuRatio, t?.cpu)}`;
    out(`| ${label} | ${p50} | ${p99} | ${rps("c32", "passes", true, true)} | ${rps("c32", "interleaved", false, false)} | ${rps("c128", "passes", false, false)} | ${rps("c128", "interleaved", false, false)} | ${cpu} |`);
  }
  const floored = Object.entries(results.paths as Record<string, PathResult>).filter(([, raw]) => !raw.skipped && raw.cpu.floor_us !== undefined);
  if (floored.length) {
    out();
    out("| path, against the floor (scripts/bench/floor.ts: the least work the contract allows; the same slices) | CPU µs/request: parley | floor | parley / floor |");
    out("|---|---|---|---|");
    for (const [label, raw] of floored) {
      const ratio = raw.cpu.beside_floor_us! / raw.cpu.floor_us!;
      out(`| ${label} | ${raw.cpu.beside_floor_us!.toFixed(0)} | ${raw.cpu.floor_us!.toFixed(0)} | ${ratio.toFixed(2)}x${verdict(ratio, raw.cpu.floor_limit)} |`);
    }
  }
  out();
  out("Targets (issue 19): passthrough added p50 ≤ 1.2x, p99 ≤ 1.5x, req/s at 32 connections in passes ≥ 0.85x, CPU/request ≤ 1.2x;");
  out("conversions p99 ≤ 2x, req/s ≥ 0.7x. The mock path has no upstream call: it is the rest of parley against a hop's call.");
  for (const [label, raw] of Object.entries(results.paths as Record<string, PathResult>)) {
    const cold = raw.cold_latency;
    if (!cold) continue;
    const parleyName = Object.keys(cold).find((name) => name !== "direct" && name !== "hop")!;
    const added = (name: string) => cold[name]!.p50 - cold.direct!.p50;
    out(`Fresh servers, before any load (${label}, the servers' first requests): added p50 ${us(added(parleyName))} µs (hop ${us(added("hop"))}) ${(added(parleyName) / added("hop")).toFixed(2)}x, p99 ${us(cold[parleyName]!.p99)} µs (hop ${us(cold.hop!.p99)}) ${(cold[parleyName]!.p99 / cold.hop!.p99).toFixed(2)}x.`);
  }

  const smol = results.smol;
  if (smol) {
    const lat = smol.latency as Latency;
    const addedOf = (name: string) => us(lat[name]!.p50 - lat.direct!.p50);
    const load = smol.load128 as { smol: Total; plain: Total };
    out();
    out("| passthrough JSON, two fresh servers | `--smol` (what `bun run start` and the binary use) | without `--smol` | target |");
    out("|---|---|---|---|");
    out(`| RSS idle | ${smol.idle_rss_mb.smol.toFixed(1)} MB | ${smol.idle_rss_mb.plain.toFixed(1)} MB | < 60 MB |`);
    out(`| RSS peak under load at c=128 | ${load.smol.peakRss.toFixed(1)} MB | ${load.plain.peakRss.toFixed(1)} MB | < 100 MB |`);
    out(`| added p50 at c=1, µs (hop ${addedOf("hop")}) | ${addedOf("smol")} | ${addedOf("plain")} | |`);
    out(`| p99 at c=1, µs (hop ${us(lat.hop!.p99)}) | ${us(lat.smol!.p99)} | ${us(lat.plain!.p99)} | |`);
    out(`| req/s at c=128, CPU µs/request | ${k(load.smol.rps)}, ${load.smol.cpuUs.toFixed(0)} | ${k(load.plain.rps)}, ${load.plain.cpuUs.toFixed(0)} | |`);
    out();
    out(`RSS of the --smol server that served every path above: idle ${results.rss_mb.idle.toFixed(1)} MB${verdict(results.rss_mb.idle / 60, 1).replace(/\(.*\)/, "(< 60 MB)")}, peak under load ${results.rss_mb.under_load.toFixed(1)} MB${verdict(results.rss_mb.under_load / 100, 1).replace(/\(.*\)/, "(< 100 MB)")}.`);
  }
  const usage = results.usage as Record<string, { added_ms: { on: number; off: number }; on: Total; off: Total; rps_ratio_median: number; cpu_us_by_server: { on: number[]; off: number[] } }> | undefined;
  if (usage) {
    out();
    out("| passthrough alpha -> OpenAI, usage records and metrics (fresh servers, three with and three without, interleaved, c=32) | added p50 at c=1, µs: on / off (median of the servers) | req/s: on / off (median of the paired slices' ratios) | CPU µs/request: on / off | CPU µs/request of each server: on; off |");
    out("|---|---|---|---|---|");
    for (const [name, run] of Object.entries(usage)) {
      const latencyCost = run.added_ms.on / run.added_ms.off - 1;
      const rpsCost = 1 - run.rps_ratio_median;
      const pct = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)} %`;
      const within = (x: number) => (x <= 0.05 ? " ok" : " **MISS**");
      const each = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(", ");
      out(`| ${name} | ${us(run.added_ms.on)} / ${us(run.added_ms.off)} (${pct(latencyCost)}${within(latencyCost)}) | ${k(run.on.rps)} / ${k(run.off.rps)} (${pct(-rpsCost)}${within(rpsCost)}) | ${run.on.cpuUs.toFixed(1)} / ${run.off.cpuUs.toFixed(1)} | ${each(run.cpu_us_by_server.on)}; ${each(run.cpu_us_by_server.off)} |`);
    }
    out("Target (issue 17): usage and metrics cost under 5 % in added latency and in req/s.");
  }

  const stream = results.stream as { compared: { name: string; direct: string; added_ms: number; chunks: number; direct_chunks: number }[] } | undefined;
  if (stream) {
    const parts = stream.compared.map((c) => `${c.name} ${us(c.added_ms)} µs (vs ${c.direct}), ${c.chunks}/${c.direct_chunks} chunks${c.added_ms < 1 && c.chunks === c.direct_chunks ? " ok" : " **MISS**"}`);
    out(`Streams (paced upstream: 20 ms to first token, 50 chunks; target < 1 ms added, every chunk): ${parts.join("; ")}.`);
  }
  const binary = results.binary;
  out(binary
    ? `Binary: \`--version\` ${binary.version_ms.toFixed(1)} ms${binary.version_ms < 50 ? " ok (< 50 ms)" : " **MISS** (< 50 ms)"}, launch to first /health ${binary.first_health_ms.toFixed(1)} ms${binary.first_health_ms < 100 ? " ok (< 100 ms)" : " **MISS** (< 100 ms)"}, idle RSS ${binary.idle_rss_mb.toFixed(1)} MB, ${binary.size_mb.toFixed(0)} MB.`
    : "Binary: not built (`bun run build` first).");
  return lines.join("\n");
}
