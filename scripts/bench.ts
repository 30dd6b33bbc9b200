/**
 * `bun run bench [--quick] [--json FILE] [--peer] [--live]`: what parley costs per request, path by
 * path, measured against a direct call and the reference hop (scripts/bench/hop.ts) in the same run;
 * `--live` with the dashboard's Live page open on the measured server all along.
 * Starts everything on 127.0.0.1 and stops it after. Needs wrk for the load runs (falls back to
 * fetch loops in this process, which load the machine differently; the output says which).
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rssMb } from "../test/lib/proc.ts";
import { latency, load, median, once, total, wrk, type Load, type Target } from "./bench/measure.ts";
import { anthropicUpstream, createFleet, KEY, parleyFromSource, root, watchLive } from "./bench/processes.ts";
import { claudeCodeBody, floorRequest, PATHS } from "./bench/profile-paths.ts";
import { streamCheck } from "./bench/stream-check.ts";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const withPeer = args.includes("--peer");
const withLive = args.includes("--live");
const jsonOut = args.includes("--json") ? args[args.indexOf("--json") + 1] : undefined;
const CLAUDE = "anthropic.claude-3-5-haiku-20241022-v1:0";
const LLAMA = "meta.llama3-8b-instruct-v1:0";
const fleet = createFleet("bench");
const { dir } = fleet;

// Durations: latency rounds x requests per round and target; load seconds per pass, slices x seconds
// interleaved (wrk takes whole seconds).
const plan = quick
  ? { rounds: 3, perRound: 60, pass: 1, slices: 1, slice: 1 }
  : { rounds: 7, perRound: 300, pass: 3, slices: 3, slice: 1 };

if (!wrk) console.error("wrk is not installed (apt-get install wrk / brew install wrk): load runs use fetch loops in this process instead, which share its CPU.");

const say = (text: string) => process.stderr.write(`${text}\n`);
const auth = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
const anthropicAuth = { "x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" };
const hello = [{ role: "user", content: "Say hello" }];
const bodies = {
  chat: JSON.stringify({ model: "gpt-4o-mini", messages: hello, max_tokens: 50 }),
  chatStream: JSON.stringify({ model: "gpt-4o-mini", stream: true, messages: hello, max_tokens: 50 }),
  claude: JSON.stringify({ model: CLAUDE, messages: hello, max_tokens: 50 }),
  llama: JSON.stringify({ model: LLAMA, messages: hello, max_tokens: 50 }),
  mock: JSON.stringify({ model: "mock", messages: hello, max_tokens: 50 }),
  invoke: JSON.stringify({ anthropic_version: "bedrock-2023-05-31", max_tokens: 50, messages: [{ role: "user", content: [{ type: "text", text: "Say hello" }] }] }),
  converse: JSON.stringify({ messages: [{ role: "user", content: [{ text: "Say hello" }] }], inferenceConfig: { maxTokens: 50 } }),
  messages: JSON.stringify({ model: CLAUDE, max_tokens: 50, messages: hello }),
  messagesStream: JSON.stringify({ model: CLAUDE, max_tokens: 50, stream: true, messages: hello }),
  anthropicApi: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 50, messages: hello }),
  anthropicApiStream: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 50, stream: true, messages: hello }),
  responsesStream: JSON.stringify({ model: "gpt-4o-mini", input: "Say hello", max_output_tokens: 50, stream: true }),
  responses: JSON.stringify({ model: "gpt-4o-mini", input: "Say hello", max_output_tokens: 50 }),
  claudeCode: JSON.stringify(claudeCodeBody()),
};

/** Servers with usage records and metrics on, and as many with them off. */
const USAGE_PAIRS = 3;
/** A pause after a warm-up load, before latency rounds. */
const SETTLE_MS = 1000;

type Kind = "passthrough" | "conversion" | "reference";
interface Path {
  label: string;
  kind: Kind;
  /** Where parley is asked, and what the hop and the direct call send to the upstream for the same answer. */
  parley: Target;
  upstreamPath: string;
  upstreamBody: string;
  /** An endpoint other work is adding: skipped, not failed, while parley answers it with a 404. */
  pending?: true;
  /** The serving process, when it is not parley (the peer). */
  pid?: number;
  /** The same request to the floor (scripts/bench/floor.ts), on the paths it serves, and the most CPU parley may spend over it. */
  floor?: { target: Target; limit: number };
}

const TARGETS: Record<Kind, { p50?: number; p99: number; rps: number; cpu?: number } | undefined> = {
  passthrough: { p50: 1.2, p99: 1.5, rps: 0.85, cpu: 1.2 },
  conversion: { p99: 2, rps: 0.7 },
  reference: undefined,
};

const results: Record<string, unknown> = { date: new Date().toISOString(), machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version }, quick, load_tool: wrk ? "wrk -t1" : "fetch loop" };

try {
  const upstream = await fleet.startUpstream({ TTFT_MS: "20", CHUNKS: "50", GAP_MS: "2" });
  const hop = await fleet.startHop(upstream.url);
  // The floor: the least work the contract allows on a path, beside the hop (run with --smol, as parley is).
  const floor = await fleet.startHelper("floor", "scripts/bench/floor.ts", { UPSTREAM: upstream.url, KEY }, [process.execPath, "--smol"]);
  // The bench upstream is also declared as an `anthropic` upstream: Claude's own names go to its /v1/messages.
  const parley = await fleet.startParley(parleyFromSource(true), upstream.url, { PARLEY_UPSTREAMS: anthropicUpstream(dir, upstream.url) });
  // --live: the dashboard's Live page open on the server every path is measured on, all along.
  const live = withLive ? watchLive(parley.url) : undefined;
  // --smol on and off are compared between two fresh processes: one that served every path before
  // would carry that run's heap into the comparison.
  const twin = await fleet.startParley(parleyFromSource(true), upstream.url);
  const plain = await fleet.startParley(parleyFromSource(false), upstream.url);
  // Usage records and metrics on (the default) and off (issue 17), in fresh servers: USAGE_PAIRS of
  // each, since two servers of the same code differ by a few % (each its own luck of memory layout
  // and compiled code), as much as the cost being measured.
  const usagePairs = [];
  for (let i = 0; i < USAGE_PAIRS; i++) {
    usagePairs.push({
      on: await fleet.startParley(parleyFromSource(true), upstream.url),
      off: await fleet.startParley(parleyFromSource(true), upstream.url, { USAGE: "off", METRICS: "off" }),
    });
  }
  await Bun.sleep(500);
  const idle = { main: rssMb(parley.proc.pid), smol: rssMb(twin.proc.pid), plain: rssMb(plain.proc.pid) };

  const at = (base: string, path: string, body: string, name: string, headers: Record<string, string> = auth): Target => ({ name, url: `${base}${path}`, body, headers });
  const atFloor = (name: string, body: string, limit: number) => {
    const request = floorRequest(PATHS[name]!, KEY);
    return { target: at(floor.url, request.url, body, "floor", request.headers), limit };
  };
  const chat = (body: string, label: string, kind: Kind, upstreamPath: string, upstreamBody: string, query = ""): Path =>
    ({ label, kind, parley: at(parley.url, `/v1/chat/completions${query}`, body, label), upstreamPath, upstreamBody });
  const paths: Path[] = [
    { ...chat(bodies.chat, "passthrough alpha -> OpenAI, JSON", "passthrough", "/v1/chat/completions", bodies.chat), floor: atFloor("json", bodies.chat, 1.25) },
    chat(bodies.chatStream, "passthrough alpha -> OpenAI, stream", "passthrough", "/v1/chat/completions", bodies.chatStream),
    chat(bodies.claude, "alpha -> Bedrock Claude (InvokeModel)", "conversion", `/model/${encodeURIComponent(CLAUDE)}/invoke`, bodies.invoke),
    chat(bodies.chat, "alpha -> OpenAI, reply as beta_messages", "conversion", "/v1/chat/completions", bodies.chat, "?target_format=beta_messages"),
    chat(bodies.llama, "alpha -> Bedrock Converse (Llama)", "conversion", `/model/${encodeURIComponent(LLAMA)}/converse`, bodies.converse),
    chat(bodies.mock, "alpha -> mock provider (no upstream)", "reference", "/v1/chat/completions", bodies.chat),
    {
      label: "Anthropic client -> Bedrock Claude, POST /v1/messages", kind: "conversion", pending: true,
      parley: at(parley.url, "/v1/messages", bodies.messages, "messages", anthropicAuth),
      upstreamPath: `/model/${encodeURIComponent(CLAUDE)}/invoke`, upstreamBody: bodies.invoke, floor: atFloor("messages", bodies.messages, 1.25),
    },
    {
      label: "Responses passthrough, POST /v1/responses", kind: "passthrough", pending: true,
      parley: at(parley.url, "/v1/responses", bodies.responses, "responses"), upstreamPath: "/v1/responses", upstreamBody: bodies.responses,
    },
    {
      label: "Anthropic client -> Bedrock Claude, POST /v1/messages, stream", kind: "conversion",
      parley: at(parley.url, "/v1/messages", bodies.messagesStream, "messages-stream", anthropicAuth),
      upstreamPath: `/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`, upstreamBody: bodies.invoke,
    },
    {
      label: "Anthropic client -> Anthropic API, POST /v1/messages", kind: "passthrough",
      parley: at(parley.url, "/v1/messages", bodies.anthropicApi, "anthropic-api", anthropicAuth), upstreamPath: "/v1/messages", upstreamBody: bodies.anthropicApi,
      floor: atFloor("anthropic-api", bodies.anthropicApi, 1.25),
    },
    {
      label: "Anthropic client -> Anthropic API, POST /v1/messages, stream", kind: "passthrough",
      parley: at(parley.url, "/v1/messages", bodies.anthropicApiStream, "anthropic-api-stream", anthropicAuth), upstreamPath: "/v1/messages", upstreamBody: bodies.anthropicApiStream,
    },
    {
      label: "Claude Code -> Anthropic API, POST /v1/messages, stream, 17 KB body", kind: "passthrough",
      parley: at(parley.url, "/v1/messages", bodies.claudeCode, "claude-code-stream", anthropicAuth), upstreamPath: "/v1/messages", upstreamBody: bodies.claudeCode,
      floor: atFloor("claude-code-stream", bodies.claudeCode, 1.15),
    },
    {
      label: "Responses passthrough, POST /v1/responses, stream", kind: "passthrough",
      parley: at(parley.url, "/v1/responses", bodies.responsesStream, "responses-stream"), upstreamPath: "/v1/responses", upstreamBody: bodies.responsesStream,
    },
    {
      label: "Bedrock client -> Bedrock, POST /model/{id}/invoke (passed through)", kind: "passthrough",
      parley: at(parley.url, `/model/${encodeURIComponent(CLAUDE)}/invoke`, bodies.invoke, "bedrock-invoke"),
      upstreamPath: `/model/${encodeURIComponent(CLAUDE)}/invoke`, upstreamBody: bodies.invoke,
    },
    {
      label: "Bedrock client -> Bedrock, POST /model/{id}/invoke-with-response-stream (passed through)", kind: "passthrough",
      parley: at(parley.url, `/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`, bodies.invoke, "bedrock-invoke-stream"),
      upstreamPath: `/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`, upstreamBody: bodies.invoke,
    },
    {
      label: "Bedrock client -> Bedrock, POST /model/{id}/converse (passed through)", kind: "passthrough",
      parley: at(parley.url, `/model/${encodeURIComponent(LLAMA)}/converse`, bodies.converse, "bedrock-converse"),
      upstreamPath: `/model/${encodeURIComponent(LLAMA)}/converse`, upstreamBody: bodies.converse,
    },
  ];
  if (withPeer) {
    const peer = await startPeer();
    paths.push({
      label: "Portkey gateway on Bun, passthrough JSON", kind: "reference", upstreamPath: "/v1/chat/completions", upstreamBody: bodies.chat,
      parley: at(peer.url, "/v1/chat/completions", bodies.chat, "portkey", { ...auth, "x-portkey-provider": "openai", "x-portkey-custom-host": `${upstream.url}/v1` }),
      pid: peer.pid,
    });
  }

  const measured: Record<string, unknown> = {};
  let peakRss = idle.main;
  for (const path of paths) {
    const target = path.parley;
    const probe = await fetch(target.url, { method: "POST", body: target.body, headers: target.headers }).then(async (r) => ({ status: r.status, text: await r.text() }));
    if (probe.status !== 200) {
      const why = probe.status === 404 && path.pending ? "skipped: parley answers 404 (endpoint not merged yet)" : `FAILED: status ${probe.status}: ${probe.text.slice(0, 200)}`;
      say(`${path.label}: ${why}`);
      measured[path.label] = { kind: path.kind, skipped: why };
      continue;
    }
    say(`${path.label} ...`);
    const servingPid = path.pid ?? parley.proc.pid;
    const hopTarget = at(hop.url, path.upstreamPath, path.upstreamBody, "hop");
    const direct = at(upstream.url, path.upstreamPath, path.upstreamBody, "direct");
    // The first path's latency on the fresh server too: what its first few thousand requests see.
    const cold = path === paths[0] ? await latency([direct, hopTarget, target], plan.rounds, plan.perRound) : undefined;
    // Steady state, as a server that has been up a while: a path's first load under concurrency
    // compiles its code and opens what it opens lazily (a codec, the usage database). Not counted.
    await load(hopTarget, hop.proc.pid, 32, plan.slice, dir);
    await load(target, servingPid, 32, plan.slice, dir);
    if (path.floor) await load(path.floor.target, floor.proc.pid, 32, plan.slice, dir);
    // The load leaves work behind (log lines and usage rows to write, a heap to collect): let it finish.
    await Bun.sleep(SETTLE_MS);
    const lat = await latency([direct, hopTarget, target], plan.rounds, plan.perRound);
    const result = { latency: lat, ...(cold ? { cold_latency: cold } : {}), load: {} as Record<string, unknown>, cpu: {} as Record<string, number> };
    const all = { hop: [] as Load[], parley: [] as Load[], floor: [] as Load[], besideFloor: [] as Load[] };
    for (const connections of [32, 128]) {
      // Back to back: a whole pass of the hop, then a whole pass of parley.
      const passes = { hop: [await load(hopTarget, hop.proc.pid, connections, plan.pass, dir)], parley: [await load(target, servingPid, connections, plan.pass, dir)] };
      // Interleaved: short slices taken in turn (parley first, then the order swapped every slice), so both see the same noise.
      const slices = { hop: [] as Load[], parley: [] as Load[] };
      for (let i = 0; i < plan.slices; i++) {
        const order = i % 2 ? (["hop", "parley"] as const) : (["parley", "hop"] as const);
        for (const who of order) slices[who].push(await load(who === "hop" ? hopTarget : target, who === "hop" ? hop.proc.pid : servingPid, connections, plan.slice, dir));
      }
      // The floor in the same slices' rhythm, between parley's: each of parley's slices has one of the floor's beside it.
      if (path.floor) {
        for (let i = 0; i < Math.max(2, plan.slices); i++) {
          for (const who of i % 2 ? (["floor", "parley"] as const) : (["parley", "floor"] as const)) {
            const run = await load(who === "floor" ? path.floor.target : target, who === "floor" ? floor.proc.pid : servingPid, connections, plan.slice, dir);
            (who === "floor" ? all.floor : all.besideFloor).push(run);
          }
        }
      }
      result.load[`c${connections}`] = {
        passes: { hop: total(passes.hop), parley: total(passes.parley) },
        interleaved: { hop: total(slices.hop), parley: total(slices.parley) },
      };
      all.hop.push(...passes.hop, ...slices.hop);
      all.parley.push(...passes.parley, ...slices.parley);
    }
    result.cpu = { hop_us: total(all.hop).cpuUs, parley_us: total(all.parley).cpuUs, ...(path.floor ? { floor_us: total(all.floor).cpuUs, beside_floor_us: total(all.besideFloor).cpuUs, floor_limit: path.floor.limit } : {}) };
    if (!path.pid) peakRss = Math.max(peakRss, total(all.parley).peakRss);
    measured[path.label] = { kind: path.kind, ...result };
  }
  results.paths = measured;

  say("--smol on and off ...");
  const passthrough = paths[0]!;
  const smolTargets = {
    direct: at(upstream.url, passthrough.upstreamPath, passthrough.upstreamBody, "direct"),
    hop: at(hop.url, passthrough.upstreamPath, passthrough.upstreamBody, "hop"),
    smol: at(twin.url, "/v1/chat/completions", bodies.chat, "smol"),
    plain: at(plain.url, "/v1/chat/completions", bodies.chat, "plain"),
  };
  for (const who of ["smol", "plain"] as const) await load(smolTargets[who], (who === "smol" ? twin : plain).proc.pid, 32, plan.slice, dir);
  await Bun.sleep(SETTLE_MS);
  const smolLatency = await latency(Object.values(smolTargets), plan.rounds, plan.perRound);
  const smolLoad = { smol: [] as Load[], plain: [] as Load[] };
  for (let i = 0; i < 2; i++) {
    for (const who of i ? (["plain", "smol"] as const) : (["smol", "plain"] as const)) {
      smolLoad[who].push(await load(smolTargets[who], (who === "smol" ? twin : plain).proc.pid, 128, plan.pass, dir));
    }
  }
  results.smol = {
    latency: smolLatency,
    idle_rss_mb: { smol: idle.smol, plain: idle.plain },
    load128: { smol: total(smolLoad.smol), plain: total(smolLoad.plain) },
  };
  results.rss_mb = { idle: idle.main, under_load: peakRss };

  say("usage and metrics on and off ...");
  const usageResults: Record<string, unknown> = {};
  results.usage = usageResults;
  for (const [name, body] of [["JSON", bodies.chat], ["stream", bodies.chatStream]] as const) {
    const direct = at(upstream.url, "/v1/chat/completions", body, "direct");
    const servers = usagePairs.map((pair, k) => ({
      on: { pid: pair.on.proc.pid, target: at(pair.on.url, "/v1/chat/completions", body, `usage-on-${k}`) },
      off: { pid: pair.off.proc.pid, target: at(pair.off.url, "/v1/chat/completions", body, `usage-off-${k}`) },
    }));
    // Warmed first, as every path is (not counted).
    for (const pair of servers) for (const server of [pair.on, pair.off]) await load(server.target, server.pid, 32, plan.slice, dir);
    await Bun.sleep(SETTLE_MS);
    const lat = await latency([direct, ...servers.flatMap((pair) => [pair.on.target, pair.off.target])], plan.rounds * 2, plan.perRound);
    const added = (who: "on" | "off") => median(servers.map((pair) => lat[pair[who].target.name]!.p50 - lat.direct!.p50));
    const runs = servers.map(() => ({ on: [] as Load[], off: [] as Load[] }));
    for (let i = 0; i < plan.slices * 2; i++) {
      for (const [k, pair] of servers.entries()) {
        for (const who of i % 2 ? (["off", "on"] as const) : (["on", "off"] as const)) runs[k]![who].push(await load(pair[who].target, pair[who].pid, 32, plan.slice, dir));
      }
    }
    // Each slice of one beside the slice of the other taken next to it: the machine's drift over the
    // run cancels out of their ratio, which a ratio of the totals keeps.
    const paired = runs.flatMap((run) => run.on.map((on, i) => on.requests / on.seconds / (run.off[i]!.requests / run.off[i]!.seconds)));
    const arm = (who: "on" | "off") => total(runs.flatMap((run) => run[who]));
    usageResults[name] = {
      added_ms: { on: added("on"), off: added("off") },
      on: arm("on"), off: arm("off"), rps_ratio_median: median(paired),
      cpu_us_by_server: { on: runs.map((run) => total(run.on).cpuUs), off: runs.map((run) => total(run.off).cpuUs) },
    };
  }

  say("streams: time to first token and chunks ...");
  results.stream = await streamCheck(upstream.url, parley.url, auth, anthropicAuth, quick ? 10 : 30);

  results.binary = await binaryStartup(upstream.url);
  if (live) results.live_events = live.events();
  await live?.stop();
} finally {
  fleet.stop();
}

if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify(results, null, 2)}\n`);
const { report } = await import("./bench/report.ts");
console.log(report(results, TARGETS, wrk ? "wrk -t1" : "fetch loop (install wrk for real figures)"));

/** The built binary's start-up (dist/parley, from `bun run build`), when there is one. */
async function binaryStartup(upstream: string) {
  const binary = join(root, "dist/parley");
  if (!existsSync(binary)) return undefined;
  const versions: number[] = [];
  for (let i = 0; i < 10; i++) {
    const started = performance.now();
    Bun.spawnSync([binary, "--version"]);
    versions.push(performance.now() - started);
  }
  const starts: number[] = [];
  let idle = 0;
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    const { proc } = await fleet.startParley([binary], upstream);
    starts.push(performance.now() - started);
    if (i === 0) {
      await Bun.sleep(500);
      idle = rssMb(proc.pid);
    }
    proc.kill();
    await proc.exited;
  }
  return { version_ms: median(versions), first_health_ms: median(starts), idle_rss_mb: idle, size_mb: Bun.file(binary).size / 1024 / 1024 };
}

/** Portkey's gateway from the npm registry, run on Bun, installed into a temporary directory. */
async function startPeer(): Promise<{ url: string; pid: number }> {
  const { freePort } = await import("../test/lib/proc.ts");
  const peerDir = join(dir, "peer");
  Bun.spawnSync(["mkdir", "-p", peerDir]);
  writeFileSync(join(peerDir, "package.json"), '{"name":"peer","private":true}');
  const install = Bun.spawnSync(["bun", "add", "@portkey-ai/gateway"], { cwd: peerDir, stdout: "ignore", stderr: "pipe" });
  if (install.exitCode !== 0) throw new Error(`could not install @portkey-ai/gateway: ${install.stderr}`);
  const port = freePort();
  const proc = Bun.spawn(["bun", "node_modules/@portkey-ai/gateway/build/start-server.js", `--port=${port}`, "--headless"], {
    cwd: peerDir, env: { ...process.env, NODE_ENV: "production" }, stdout: "ignore", stderr: "ignore",
  });
  fleet.adopt(proc);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 500 && !(await fetch(url).then(() => true, () => false)); i++) await Bun.sleep(20);
  await once({ name: "portkey", url: `${url}/v1/chat/completions`, body: bodies.chat, headers: auth }).catch(() => {});
  return { url, pid: proc.pid };
}
