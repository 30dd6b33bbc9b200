/**
 * `bun scripts/bench/ab.ts DIR[@no-smol]... [--path json|stream|bedrock|anthropic|converse|mock|messages|messages-stream|anthropic-api|anthropic-api-stream|responses|responses-stream] [--slices 6]
 *   [--seconds 2] [--connections 32] [--no-smol]`
 * Two or more parley checkouts (each DIR holds src/cli.ts), plus the reference hop, loaded by wrk in
 * short slices taken in turn (the order rotated every slice), so every variant sees the same noise:
 * what a change buys in CPU per request and req/s, on a shared machine. `DIR@no-smol` runs that
 * checkout without `--smol` (as `--no-smol` does for all); `DIR@KEY=VALUE` adds to its environment
 * (`../main@USAGE=off@METRICS=off`), so one checkout can be compared with a feature on and off;
 * `DIR@live` keeps a client on its `/admin/v1/events` all along, as the dashboard's Live page does.
 * `floor` adds scripts/bench/floor.ts, the least the contract asks of a proxy (paths json and messages).
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { load, median, total, wrk, type Load, type Target } from "./measure.ts";
import { anthropicUpstream, createFleet, KEY, watchLive } from "./processes.ts";
import { floorRequest, parleyRequest, PATHS } from "./profile-paths.ts";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  allowPositionals: true,
  options: {
    path: { type: "string", default: "json" }, slices: { type: "string", default: "6" }, seconds: { type: "string", default: "2" },
    connections: { type: "string", default: "32" }, "no-smol": { type: "boolean", default: false },
  },
});
if (!wrk) throw new Error("needs wrk (apt-get install wrk)");
if (positionals.length === 0) throw new Error("name at least one parley checkout directory");
const path = PATHS[values.path!];
if (!path) throw new Error(`--path is one of ${Object.keys(PATHS).join(", ")}`);
const fleet = createFleet("ab");
const { dir } = fleet;
const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
try {
  const upstream = await fleet.startUpstream();
  const hop = await fleet.startHop(upstream.url);
  const lives: ReturnType<typeof watchLive>[] = [];
  const variants: { name: string; pid: number; target: Target }[] = [
    { name: "hop", pid: hop.proc.pid, target: { name: "hop", url: `${hop.url}${path.upstreamPath}`, body: JSON.stringify(path.upstreamBody ?? path.body), headers } },
  ];
  for (const checkout of positionals) {
    if (checkout === "floor") {
      const floor = await fleet.startHelper("floor", "scripts/bench/floor.ts", { UPSTREAM: upstream.url, KEY }, [process.execPath, ...(values["no-smol"] ? [] : ["--smol"])]);
      const request = floorRequest(path, KEY);
      variants.push({ name: "floor", pid: floor.proc.pid, target: { name: "floor", url: `${floor.url}${request.url}`, body: JSON.stringify(path.body), headers: request.headers } });
      continue;
    }
    const [where, ...flags] = checkout.split("@");
    const smol = !values["no-smol"] && !flags.includes("no-smol");
    const env = Object.fromEntries(flags.filter((flag) => flag.includes("=")).map((flag) => [flag.slice(0, flag.indexOf("=")), flag.slice(flag.indexOf("=") + 1)]));
    if (path.anthropic) env.PARLEY_UPSTREAMS ??= anthropicUpstream(dir, upstream.url);
    const parley = await fleet.startParley([process.execPath, "--no-env-file", ...(smol ? ["--smol"] : []), join(resolve(where!), "src/cli.ts")], upstream.url, env);
    if (flags.includes("live")) lives.push(watchLive(parley.url));
    const request = parleyRequest(path, KEY);
    variants.push({ name: checkout, pid: parley.proc.pid, target: { name: checkout, url: `${parley.url}${request.url}`, body: JSON.stringify(path.body), headers: request.headers } });
  }
  const runs = new Map<string, Load[]>(variants.map((v) => [v.name, []]));
  for (const v of variants) await load(v.target, v.pid, Number(values.connections), 1, dir); // warm up
  for (let i = 0; i < Number(values.slices); i++) {
    for (let j = 0; j < variants.length; j++) {
      const v = variants[(i + j) % variants.length]!;
      runs.get(v.name)!.push(await load(v.target, v.pid, Number(values.connections), Number(values.seconds), dir));
    }
  }
  const base = total(runs.get(positionals[0]!)!);
  console.log(`path ${values.path}, ${values.slices} slices of ${values.seconds} s each, wrk -t1 -c${values.connections}`);
  for (const v of variants) {
    const t = total(runs.get(v.name)!);
    // Noise only ever adds CPU: a slice's least is the steadiest sign of a variant's own cost.
    const slices = runs.get(v.name)!.map((r) => (r.cpu / r.requests) * 1e6);
    console.log(`  ${v.name.padEnd(30)} ${t.rps.toFixed(0).padStart(6)} req/s (${(t.rps / base.rps).toFixed(2)}x)  CPU ${t.cpuUs.toFixed(1).padStart(5)} µs/request (${(t.cpuUs - base.cpuUs >= 0 ? "+" : "")}${(t.cpuUs - base.cpuUs).toFixed(1)}; slices median ${median(slices).toFixed(1)}, least ${Math.min(...slices).toFixed(1)})  peak RSS ${t.peakRss.toFixed(0)} MB`);
  }
  for (const live of lives) console.log(`  (a Live page read ${live.events()} request events)`);
  await Promise.all(lives.map((live) => live.stop()));
} finally {
  fleet.stop();
}
