/**
 * `bun scripts/bench/lat.ts [--path json,messages] [--rounds 7] [--cold] [DIR[@KEY=VALUE]... | floor]`: added latency at
 * concurrency 1 only, for the given paths, of the hop and of each parley checkout (default: this one),
 * each request in turn, on servers warmed by a 1 s load as `bun run bench` measures it (`--cold`: on
 * the fresh servers). `floor` adds scripts/bench/floor.ts (paths json and messages). Quick to rerun while
 * changing the critical path.
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { latency, load, type Target } from "./measure.ts";
import { anthropicUpstream, createFleet, KEY, root } from "./processes.ts";
import { floorRequest, parleyRequest, PATHS } from "./profile-paths.ts";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  allowPositionals: true,
  options: {
    path: { type: "string", default: "json" }, rounds: { type: "string", default: "7" }, "per-round": { type: "string", default: "300" },
    cold: { type: "boolean", default: false },
  },
});
const fleet = createFleet("lat");
const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
try {
  const upstream = await fleet.startUpstream();
  const hop = await fleet.startHop(upstream.url);
  const checkouts = positionals.length ? positionals : [root];
  const servers = [];
  for (const checkout of checkouts) {
    if (checkout === "floor") {
      // The contract's least work (floor.ts), called on the upstream's own path as ab.ts calls it.
      const floor = await fleet.startHelper("floor", "scripts/bench/floor.ts", { UPSTREAM: upstream.url, KEY }, [process.execPath, "--smol"]);
      servers.push({ name: "floor", ...floor, floor: true });
      continue;
    }
    // `DIR@KEY=VALUE` adds to that server's environment, as in ab.ts.
    const [where, ...flags] = checkout.split("@");
    const env = Object.fromEntries(flags.map((flag) => [flag.slice(0, flag.indexOf("=")), flag.slice(flag.indexOf("=") + 1)]));
    // A path on the Anthropic API needs an `anthropic` upstream (a checkout without the kind refuses the file).
    if (values.path!.split(",").some((name) => PATHS[name]?.anthropic)) env.PARLEY_UPSTREAMS ??= anthropicUpstream(fleet.dir, upstream.url);
    servers.push({ name: checkout, floor: false, ...(await fleet.startParley([process.execPath, "--no-env-file", "--smol", join(resolve(where!), "src/cli.ts")], upstream.url, env)) });
  }
  for (const name of values.path!.split(",")) {
    const path = PATHS[name];
    if (!path) throw new Error(`--path is one of ${Object.keys(PATHS).join(", ")}`);
    const upstreamBody = JSON.stringify(path.upstreamBody ?? path.body);
    const request = parleyRequest(path, KEY);
    const targets: Target[] = [
      { name: "direct", url: `${upstream.url}${path.upstreamPath}`, body: upstreamBody, headers },
      { name: "hop", url: `${hop.url}${path.upstreamPath}`, body: upstreamBody, headers },
      ...servers.map((s) => {
        const to = s.floor ? floorRequest(path, KEY) : request;
        return { name: s.name, url: `${s.url}${to.url}`, body: JSON.stringify(path.body), headers: to.headers };
      }),
    ];
    if (!values.cold) {
      const pids = [hop.proc.pid, ...servers.map((server) => server.proc.pid)];
      for (const [i, t] of targets.slice(1).entries()) await load(t, pids[i]!, 32, 1, fleet.dir);
      await Bun.sleep(1000);
    }
    const result = await latency(targets, Number(values.rounds), Number(values["per-round"]));
    const direct = result.direct!.p50;
    const hopAdded = (result.hop!.p50 - direct) * 1000;
    console.log(`path ${name}: direct p50 ${(direct * 1000).toFixed(0)} µs`);
    for (const t of targets.slice(1)) {
      const added = (result[t.name]!.p50 - direct) * 1000;
      console.log(`  ${t.name.padEnd(24)} added p50 ${added.toFixed(0).padStart(4)} µs (${(added / hopAdded).toFixed(2)}x)  p99 ${(result[t.name]!.p99 * 1000).toFixed(0)} µs (${(result[t.name]!.p99 / result.hop!.p99).toFixed(2)}x)`);
    }
  }
} finally {
  fleet.stop();
}
