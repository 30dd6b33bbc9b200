/**
 * `bun scripts/bench/profile.ts [--path json|stream|bedrock|anthropic|converse|mock|messages|messages-stream|responses|responses-stream|bedrock-invoke|bedrock-invoke-stream] [--hop] [--no-smol]
 *   [--seconds 10] [--connections 32] [--keep DIR] [--live]`
 * Runs parley from source (or, with --hop, the reference hop) under `bun --cpu-prof` while wrk loads
 * one path, then prints where the CPU went: self time per function and per module, each as % of the
 * samples and as µs per request, next to the process's CPU per request from /proc and its heap.
 */
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { rssMb } from "../../test/lib/proc.ts";
import { load, wrk, type Target } from "./measure.ts";
import { anthropicUpstream, createFleet, KEY, root, watchLive } from "./processes.ts";
import { parleyRequest, PATHS } from "./profile-paths.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    path: { type: "string", default: "json" }, hop: { type: "boolean", default: false }, "no-smol": { type: "boolean", default: false },
    seconds: { type: "string", default: "10" }, connections: { type: "string", default: "32" }, keep: { type: "string" },
    "no-cpu-prof": { type: "boolean", default: false }, live: { type: "boolean", default: false },
  },
});
if (!wrk) throw new Error("profiling needs wrk (apt-get install wrk)");
const path = PATHS[values.path!];
if (!path) throw new Error(`--path is one of ${Object.keys(PATHS).join(", ")}`);

const fleet = createFleet("profile", values.keep);
const { dir } = fleet;
const profiles = join(dir, "profiles");
mkdirSync(profiles, { recursive: true });
const smol = values["no-smol"] ? [] : ["--smol"];
const heapFile = join(dir, "heap.json");
const prof = [
  "--preload", join(import.meta.dir, "heap-preload.ts"),
  ...(values["no-cpu-prof"] ? [] : ["--cpu-prof", `--cpu-prof-dir=${profiles}`, "--cpu-prof-interval=100"]),
];
process.env.HEAP_STATS_FILE = heapFile;
try {
  const upstream = await fleet.startUpstream();
  const server = values.hop
    ? await fleet.startHop(upstream.url, [process.execPath, ...smol, ...prof])
    : await fleet.startParley([process.execPath, "--no-env-file", ...smol, ...prof, join(root, "src/cli.ts")], upstream.url, path.anthropic ? { PARLEY_UPSTREAMS: anthropicUpstream(fleet.dir, upstream.url) } : {});
  const target: Target = values.hop
    ? { name: "hop", url: `${server.url}${path.upstreamPath}`, body: JSON.stringify(path.upstreamBody ?? path.body), headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" } }
    : { name: "parley", url: `${server.url}${parleyRequest(path, KEY).url}`, body: JSON.stringify(path.body), headers: parleyRequest(path, KEY).headers };
  // --live: a client on /admin/v1/events all along, as the dashboard's Live page.
  const live = values.live && !values.hop ? watchLive(server.url) : undefined;
  const warm = await load(target, server.proc.pid, Number(values.connections), 2, dir);
  const threadsBefore = threadCpu(server.proc.pid);
  const run = await load(target, server.proc.pid, Number(values.connections), Number(values.seconds), dir);
  const rss = rssMb(server.proc.pid);
  await live?.stop();
  const threads = threadCpu(server.proc.pid);

  server.proc.kill("SIGINT");
  await server.proc.exited;
  // The profile covers the whole process: start-up, a 2 s warm-up, the run and the shutdown.
  const requests = warm.requests + run.requests;
  console.log(`${values.hop ? "hop" : "parley"} · path ${values.path} · ${values["no-smol"] ? "no --smol" : "--smol"} · wrk -t1 -c${values.connections} ${values.seconds}s`);
  console.log(`${run.requests} requests, ${(run.requests / run.seconds).toFixed(0)} req/s, CPU ${((run.cpu / run.requests) * 1e6).toFixed(1)} µs/request (/proc, all threads, profiler on), RSS at the end ${rss.toFixed(1)} MB, peak ${run.peakRss.toFixed(1)} MB`);
  console.log("CPU by thread over the run, µs/request:");
  for (const [name, seconds] of [...threads].map(([n, s]) => [n, s - (threadsBefore.get(n) ?? 0)] as const).filter(([, s]) => s > 0).sort((a, b) => b[1] - a[1])) {
    console.log(`  ${((seconds / run.requests) * 1e6).toFixed(1).padStart(6)}  ${name}`);
  }
  const heap = JSON.parse(readSafe(heapFile) || "null") as { peakHeap: number; heapSize: number; objectCount: number; types: [string, number][] } | null;
  if (heap) {
    console.log(`JS heap: peak ${(heap.peakHeap / 1048576).toFixed(1)} MB; at exit ${(heap.heapSize / 1048576).toFixed(1)} MB, ${heap.objectCount} objects`);
    console.log(`  commonest at exit: ${heap.types.map(([type, n]) => `${type} ${n}`).join(", ")}`);
  }
  if (!values["no-cpu-prof"]) {
    const file = readdirSync(profiles).find((name) => name.endsWith(".cpuprofile"));
    if (!file) throw new Error(`no profile written in ${profiles}`);
    summarize(JSON.parse(readFileSync(join(profiles, file), "utf8")), requests);
    if (values.keep) console.log(`profile: ${join(profiles, file)}`);
  }
} finally {
  fleet.stop();
}

/** CPU seconds per thread name (threads of one name summed), from /proc/<pid>/task/<tid>/stat. */
function threadCpu(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSafe(`/proc/${pid}/task`)) {
    const name = readSafe(`/proc/${pid}/task/${tid}/comm`).trim().replace(/\d+$/, "#");
    const stat = readSafe(`/proc/${pid}/task/${tid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const seconds = (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100;
    const key = tid === String(pid) ? `${name} (main: JS, event loop, GC on the mutator)` : name;
    byName.set(key, (byName.get(key) ?? 0) + seconds);
  }
  return byName;
}

function readSafe(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

/**
 * Self time per function and per module from the JS thread's samples (wall time between samples),
 * per request of the whole profile. Native frames directly under the root are the event loop
 * (socket reads and writes, HTTP parsing, waiting), shown apart. Bun's fetch runs its sockets on
 * another thread, which the samples do not see but /proc counts.
 */
function summarize(profile: Profile, requests: number) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const topLevel = new Set(profile.nodes.find((node) => node.callFrame.functionName === "(root)")?.children ?? []);
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0)));
  const fns = new Map<string, number>();
  const modules = new Map<string, number>();
  let all = 0;
  let loop = 0;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const where = url.replace(`${root}/`, "").replace(/^.*node_modules\//, "node_modules/");
    if (!url && !functionName && topLevel.has(id)) {
      loop += us;
      continue;
    }
    all += us;
    const fn = `${functionName || "(anonymous)"} ${where ? `${where}:${lineNumber + 1}` : "(native)"}`;
    fns.set(fn, (fns.get(fn) ?? 0) + us);
    const module = where ? where.replace(/^(node_modules\/(@[^/]+\/)?[^/]+).*$/, "$1") : `(native) ${functionName}`;
    modules.set(module, (modules.get(module) ?? 0) + us);
  }
  const show = (title: string, table: Map<string, number>, n: number) => {
    console.log(`\n${title}: % of busy samples, µs/request`);
    for (const [name, us] of [...table].sort((a, b) => b[1] - a[1]).slice(0, n)) {
      console.log(`  ${((us / all) * 100).toFixed(1).padStart(5)}%  ${(us / requests).toFixed(2).padStart(6)}  ${name}`);
    }
  };
  console.log(`JS thread: ${(all / 1e6).toFixed(2)} s in frames = ${(all / requests).toFixed(1)} µs/request; event loop and native outside JS ${(loop / 1e6).toFixed(2)} s = ${(loop / requests).toFixed(1)} µs/request`);
  show("modules", modules, 20);
  show("functions (self time)", fns, 40);
}
