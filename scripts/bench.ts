/**
 * `bun run bench [--peer] [--json FILE] [--quick]`: what parley adds, measured against a direct call
 * and a bare Bun proxy hop in the same run. Starts everything on 127.0.0.1 and stops it after.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const withPeer = args.includes("--peer");
const jsonOut = args.includes("--json") ? args[args.indexOf("--json") + 1] : undefined;
const root = resolve(import.meta.dir, "..");
const KEY = "sk-bench-key";
const CLAUDE = "anthropic.claude-3-5-haiku-20241022-v1:0";
const dir = mkdtempSync(join(tmpdir(), "parley-bench-"));
const children: Subprocess[] = [];

const cores = navigator.hardwareConcurrency;

type Json = Record<string, unknown>;
const results: Json = { date: new Date().toISOString(), machine: { cpus: cores, bun: Bun.version }, quick };
const rows: [string, string, string, string][] = [];
const row = (metric: string, value: string, vs = "", verdict = "") => rows.push([metric, value, vs, verdict]);

// ---- processes ----

async function start(name: string, cmd: string[], env: Record<string, string> = {}, portFromOutput = true): Promise<{ url: string; proc: Subprocess }> {
  const proc = Bun.spawn(cmd, { cwd: root, env: { ...process.env, ...env }, stdout: "pipe", stderr: "ignore" });
  children.push(proc);
  if (!portFromOutput) return { url: "", proc };
  let seen = "";
  for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
    seen += new TextDecoder().decode(chunk);
    const port = /listening (\d+)/.exec(seen)?.[1];
    if (port) return { url: `http://127.0.0.1:${port}`, proc };
  }
  throw new Error(`${name} did not start: ${seen}`);
}

function freePort(): number {
  const probe = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

async function waitHealthy(url: string, path = "/health") {
  for (let i = 0; i < 2500; i++) {
    if (await fetch(`${url}${path}`).then((r) => r.status < 500, () => false)) return;
    await Bun.sleep(2);
  }
  throw new Error(`${url} never became healthy`);
}

async function startParley(command: string[], upstream: string) {
  const port = freePort();
  const proc = Bun.spawn([...command, "serve", "--port", String(port)], {
    cwd: dir,
    env: {
      ...process.env, HOME: dir, PARLEY_DATA_DIR: join(dir, `data-${port}`), PARLEY_CONFIG_DIR: join(dir, "config"),
      API_KEY: KEY, ALPHA_API_KEY: "sk-upstream", ALPHA_BASE_URL: `${upstream}/v1`,
      BETA_REGION: "us-east-1", BETA_ACCESS_KEY_ID: "AKIABENCH", BETA_SECRET_ACCESS_KEY: "bench", BETA_ENDPOINT_URL: upstream,
      RATE_LIMIT_RPM: "1000000000",
    },
    stdout: "ignore",
    stderr: "ignore",
  });
  children.push(proc);
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url);
  return { url, proc };
}

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

// ---- requests ----

const chatBody = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Say hello" }], max_tokens: 50 });
const claudeBody = JSON.stringify({ model: CLAUDE, messages: [{ role: "user", content: "Say hello" }], max_tokens: 50 });
const anthropicBody = JSON.stringify({ anthropic_version: "bedrock-2023-05-31", max_tokens: 50, messages: [{ role: "user", content: [{ type: "text", text: "Say hello" }] }] });
const responsesBody = JSON.stringify({ model: "gpt-4o-mini", input: "Say hello", max_output_tokens: 50 });
const messagesBody = JSON.stringify({ model: CLAUDE, max_tokens: 50, messages: [{ role: "user", content: [{ type: "text", text: "Say hello" }] }] });
const auth = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
const anthropicAuth = { "x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" };

interface Target {
  name: string;
  url: string;
  body: string;
  headers: Record<string, string>;
}

async function once(t: Target): Promise<number> {
  const started = performance.now();
  const response = await fetch(t.url, { method: "POST", body: t.body, headers: t.headers });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${t.name}: status ${response.status}`);
  return performance.now() - started;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/**
 * Interleaved rounds at concurrency 1: within a round, requests go to each target in turn, so all
 * targets see the same moment's noise; each target's median of its round medians.
 */
async function latency(targets: Target[], rounds: number, perRound: number): Promise<Record<string, number>> {
  for (let i = 0; i < 100; i++) for (const t of targets) await once(t);
  const medians: number[][] = targets.map(() => []);
  for (let r = 0; r < rounds; r++) {
    const times: number[][] = targets.map(() => []);
    for (let i = 0; i < perRound; i++) {
      for (let j = 0; j < targets.length; j++) {
        const k = (i + j) % targets.length;
        times[k]!.push(await once(targets[k]!));
      }
    }
    times.forEach((xs, k) => medians[k]!.push(median(xs)));
  }
  return Object.fromEntries(targets.map((t, k) => [t.name, median(medians[k]!)]));
}

const wrk = Bun.which("wrk");

/** Requests per second at `connections`, with wrk when installed, else a keep-alive fetch loop. */
async function throughput(t: Target, connections: number, seconds: number, sample?: () => void): Promise<number> {
  const sampler = sample ? setInterval(sample, 200) : undefined;
  try {
    if (wrk) {
      const script = join(dir, "post.lua");
      const headers = Object.entries(t.headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`).join("\n");
      writeFileSync(script, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(t.body)}\n${headers}\n`);
      const proc = Bun.spawn([wrk, "-t2", `-c${connections}`, `-d${seconds}s`, "-s", script, t.url], { stdout: "pipe", stderr: "pipe" });
      const out = await new Response(proc.stdout).text();
      await proc.exited;
      if (/Non-2xx/.test(out)) throw new Error(`${t.name}: non-2xx answers under load\n${out}`);
      return Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
    }
    let done = 0;
    const until = performance.now() + seconds * 1000;
    await Promise.all(Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        await once(t);
        done++;
      }
    }));
    return done / seconds;
  } finally {
    clearInterval(sampler);
  }
}

/** Time to the first content chunk and the number of content chunks, for one streamed request. */
async function streamOnce(t: Target, contentMarker: string): Promise<{ ttft: number; chunks: number }> {
  const started = performance.now();
  const response = await fetch(t.url, { method: "POST", body: t.body, headers: t.headers });
  let ttft = Number.NaN;
  let text = "";
  for await (const part of response.body!) {
    text += new TextDecoder().decode(part);
    if (Number.isNaN(ttft) && text.includes(contentMarker)) ttft = performance.now() - started;
  }
  return { ttft, chunks: text.split(contentMarker).length - 1 };
}

/** The same, for a direct Bedrock stream: AWS event-stream frames, each a base64 chunk of the model's JSON. */
async function bedrockStreamOnce(t: Target, contentMarker: string): Promise<{ ttft: number; chunks: number }> {
  const started = performance.now();
  const response = await fetch(t.url, { method: "POST", body: t.body, headers: t.headers });
  let ttft = Number.NaN;
  let chunks = 0;
  let buffer = Buffer.alloc(0);
  for await (const part of response.body!) {
    buffer = Buffer.concat([buffer, part]);
    while (buffer.length >= 4 && buffer.readUInt32BE(0) <= buffer.length) {
      const length = buffer.readUInt32BE(0);
      const frame = buffer.subarray(0, length);
      buffer = buffer.subarray(length);
      // Prelude (12 bytes) and headers, then the payload, then a 4-byte CRC.
      const payload = frame.subarray(12 + frame.readUInt32BE(4), length - 4).toString();
      const bytes = /"bytes":"([^"]+)"/.exec(payload)?.[1];
      if (!bytes || !Buffer.from(bytes, "base64").toString().includes(contentMarker)) continue;
      chunks++;
      if (Number.isNaN(ttft)) ttft = performance.now() - started;
    }
  }
  return { ttft, chunks };
}

// ---- the run ----

try {
  const upstream = await start("upstream", ["bun", "scripts/bench/upstream.ts"], { TTFT_MS: "20", CHUNKS: "50", GAP_MS: "2" });
  const hop = await start("hop", ["bun", "scripts/bench/hop.ts"], { UPSTREAM: upstream.url });
  const source = await startParley(["bun", "--no-env-file", "--smol", join(root, "src/cli.ts")], upstream.url);
  const binaryPath = join(root, "dist/parley");
  const binary = existsSync(binaryPath) ? await startParley([binaryPath], upstream.url) : undefined;
  await Bun.sleep(500);
  const idle = rssOf(source.proc.pid);
  const idleBinary = binary ? rssOf(binary.proc.pid) : undefined;
  const peer = withPeer ? await startPeer() : undefined;

  const t = (name: string, url: string, body: string, headers: Record<string, string> = auth): Target => ({ name, url, body, headers });
  const targets = {
    direct: t("direct", `${upstream.url}/v1/chat/completions`, chatBody),
    hop: t("hop", `${hop.url}/v1/chat/completions`, chatBody),
    passthrough: t("parley passthrough", `${source.url}/v1/chat/completions`, chatBody),
    directResponses: t("direct responses", `${upstream.url}/v1/responses`, responsesBody),
    responses: t("parley responses passthrough", `${source.url}/v1/responses`, responsesBody),
    directBedrock: t("direct bedrock", `${upstream.url}/model/${encodeURIComponent(CLAUDE)}/invoke`, anthropicBody),
    toBedrock: t("parley alpha -> bedrock", `${source.url}/v1/chat/completions`, claudeBody),
    toAnthropic: t("parley alpha -> beta_messages", `${source.url}/v1/chat/completions?target_format=beta_messages`, chatBody),
    messagesToBedrock: t("parley messages -> bedrock", `${source.url}/v1/messages`, messagesBody, anthropicAuth),
    ...(binary ? { binary: t("parley binary passthrough", `${binary.url}/v1/chat/completions`, chatBody) } : {}),
    ...(peer ? { peer: t("portkey on bun", `${peer}/v1/chat/completions`, chatBody, { ...auth, "x-portkey-provider": "openai", "x-portkey-custom-host": `${upstream.url}/v1` }) } : {}),
  };

  // Added latency at concurrency 1. Each scenario is its own interleaved set of direct, hop and the
  // target, so every gateway process gets the same share of requests: a process called more often
  // stays warmer and answers faster, which would flatter whichever got more.
  const scenarios: [label: string, target: Target, direct: Target, limit?: number][] = [
    ["passthrough", targets.passthrough, targets.direct, 1.3],
    ["responses passthrough", targets.responses, targets.directResponses, 1.3],
    ["alpha -> Bedrock-Anthropic", targets.toBedrock, targets.directBedrock, 1.6],
    ["alpha -> beta_messages reply", targets.toAnthropic, targets.direct, 1.6],
    ["/v1/messages -> Bedrock Claude (lossless)", targets.messagesToBedrock, targets.directBedrock, 1.3],
    ...(binary ? [["binary passthrough", targets.binary!, targets.direct, 1.3] as [string, Target, Target, number]] : []),
    ...(peer ? [["portkey on bun", targets.peer!, targets.direct] as [string, Target, Target]] : []),
  ];
  const latencies: Json = {};
  for (const [label, target, direct, limit] of scenarios) {
    const set = [...new Set([targets.direct, direct, targets.hop, target])];
    const lat = await latency(set, quick ? 3 : 7, quick ? 100 : 300);
    const hopAdded = lat.hop! - lat.direct!;
    const added = lat[target.name]! - lat[direct.name]!;
    const ratio = added / hopAdded;
    latencies[label] = { median_ms: lat, added_ms: added, hop_added_ms: hopAdded, ratio };
    if (label === "passthrough") {
      row("direct call, median", `${(lat.direct! * 1000).toFixed(0)} µs`);
      row("added latency, reference hop", `${(hopAdded * 1000).toFixed(0)} µs`);
    }
    row(`added latency, ${label}`, `${(added * 1000).toFixed(0)} µs`, `hop ${(hopAdded * 1000).toFixed(0)} µs = ${ratio.toFixed(2)}x`, limit ? (ratio <= limit ? `ok (≤ ${limit}x)` : `MISS (≤ ${limit}x)`) : "");
  }
  results.latency = latencies;

  // Throughput.
  let peak = idle;
  let peakBinary = idleBinary ?? 0;
  const sample = () => (peak = Math.max(peak, rssOf(source.proc.pid)));
  const sampleBinary = () => binary && (peakBinary = Math.max(peakBinary, rssOf(binary.proc.pid)));
  const seconds = quick ? 4 : 8;
  // Each target runs in slices taken in turn, so a slow moment of the machine is shared by all.
  const slices = quick ? 2 : 4;
  for (const connections of [32, 128]) {
    const runs: Record<string, number[]> = {};
    for (let slice = 0; slice < slices; slice++) {
      for (const target of [targets.hop, targets.passthrough, ...(binary ? [targets.binary!] : []), ...(peer ? [targets.peer!] : [])]) {
        const measured = await throughput(target, connections, seconds / slices, target === targets.passthrough ? sample : target === targets.binary ? sampleBinary : undefined);
        (runs[target.name] ??= []).push(measured);
      }
    }
    const rps = Object.fromEntries(Object.entries(runs).map(([name, xs]) => [name, median(xs)]));
    results[`rps_${connections}`] = rps;
    const ratio = rps["parley passthrough"]! / rps.hop!;
    row(`req/s at ${connections} connections (${wrk ? "wrk" : "fetch loop"})`, `${rps["parley passthrough"]!.toFixed(0)}`, `hop ${rps.hop!.toFixed(0)} = ${ratio.toFixed(2)}x`, connections === 32 ? (ratio >= 0.8 ? "ok (≥ 0.8x)" : "MISS (≥ 0.8x)") : "");
    if (binary) row(`  binary at ${connections}`, `${rps["parley binary passthrough"]!.toFixed(0)}`, `${(rps["parley binary passthrough"]! / rps.hop!).toFixed(2)}x hop`);
    if (peer) {
      const vsPeer = rps["parley passthrough"]! / rps["portkey on bun"]!;
      row(`  portkey on bun at ${connections}`, `${rps["portkey on bun"]!.toFixed(0)}`, `parley ${vsPeer.toFixed(2)}x`, connections === 32 ? (vsPeer >= 3 ? "ok (≥ 3x)" : "MISS (≥ 3x)") : "");
    }
  }
  await Bun.sleep(5000);
  const after = rssOf(source.proc.pid);
  const afterBinary = binary ? rssOf(binary.proc.pid) : undefined;
  results.rss_mb = { idle, under_load: peak, five_seconds_after: after, binary: binary ? { idle: idleBinary, under_load: peakBinary, five_seconds_after: afterBinary } : null };
  const rssRows = (label: string, i: number, p: number, a: number) => {
    row(`RSS idle, ${label}`, `${i.toFixed(1)} MB`, "", i < 60 ? "ok (< 60 MB)" : "MISS (< 60 MB)");
    row(`RSS under load (peak), ${label}`, `${p.toFixed(1)} MB`, "", p < 100 ? "ok (< 100 MB)" : "MISS (< 100 MB)");
    row(`RSS 5 s after load, ${label}`, `${a.toFixed(1)} MB`);
  };
  rssRows("from source", idle, peak, after);
  if (binary) rssRows("binary", idleBinary!, peakBinary, afterBinary!);

  // Streaming: added time to first token, and no chunk lost or merged.
  const streamBody = JSON.stringify({ model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content: "Count" }] });
  const responsesStream = JSON.stringify({ model: "gpt-4o-mini", stream: true, input: "Count" });
  const streams = [
    { name: "direct", target: t("direct", `${upstream.url}/v1/chat/completions`, streamBody), marker: '"content":"tok' },
    { name: "passthrough", target: t("passthrough", `${source.url}/v1/chat/completions`, streamBody), marker: '"content":"tok' },
    { name: "converted", target: t("converted", `${source.url}/v1/chat/completions?target_format=beta_messages`, streamBody), marker: '"text_delta","text":"tok' },
    { name: "responses direct", target: t("responses direct", `${upstream.url}/v1/responses`, responsesStream), marker: '"delta":"tok' },
    { name: "responses passthrough", target: t("responses passthrough", `${source.url}/v1/responses`, responsesStream), marker: '"delta":"tok' },
    // Bedrock's own events, relayed: the bench upstream paces them as it paces the OpenAI stream.
    { name: "messages -> bedrock", target: t("messages -> bedrock", `${source.url}/v1/messages`, JSON.stringify({ ...JSON.parse(messagesBody), stream: true }), anthropicAuth), marker: '"text_delta","text":"tok' },
  ];
  const ttft: Record<string, number[]> = { ...Object.fromEntries(streams.map((s) => [s.name, []])), "direct bedrock": [] };
  const chunks: Record<string, number> = {};
  const directBedrockStream = t("direct bedrock", `${upstream.url}/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`, anthropicBody);
  for (let i = 0; i < (quick ? 10 : 30); i++) {
    for (const s of streams) {
      const { ttft: first, chunks: n } = await streamOnce(s.target, s.marker);
      ttft[s.name]!.push(first);
      chunks[s.name] = n;
    }
    const { ttft: first, chunks: n } = await bedrockStreamOnce(directBedrockStream, '"text_delta","text":"tok');
    ttft["direct bedrock"]!.push(first);
    chunks["direct bedrock"] = n;
  }
  const ttftMedian = Object.fromEntries(Object.entries(ttft).map(([k, v]) => [k, median(v)]));
  results.stream = { ttft_ms: ttftMedian, chunks };
  // Bedrock's stream has one frame more before the first token than OpenAI's: its own direct call is the reference.
  for (const [name, direct] of [["passthrough", "direct"], ["converted", "direct"], ["responses passthrough", "responses direct"], ["messages -> bedrock", "direct bedrock"]] as const) {
    const extra = ttftMedian[name]! - ttftMedian[direct]!;
    row(`stream: added time to first token, ${name}`, `${(extra * 1000).toFixed(0)} µs`, `vs ${direct}`, extra < 1 ? "ok (< 1 ms)" : "MISS (< 1 ms)");
    row(`stream: chunks, ${name}`, `${chunks[name]}`, `${direct} ${chunks[direct]}`, chunks[name] === chunks[direct] ? "ok (equal)" : "MISS (equal)");
  }

  // Cold start of the binary.
  if (existsSync(binaryPath)) {
    const versions: number[] = [];
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      Bun.spawnSync([binaryPath, "--version"]);
      versions.push(performance.now() - started);
    }
    const starts: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const { proc, url } = await startParley([binaryPath], upstream.url);
      starts.push(performance.now() - started);
      void url;
      proc.kill();
      await proc.exited;
    }
    results.binary = { version_ms: median(versions), first_health_ms: median(starts), size_mb: Bun.file(binaryPath).size / 1024 / 1024 };
    row("binary --version", `${median(versions).toFixed(1)} ms`, "", median(versions) < 50 ? "ok (< 50 ms)" : "MISS (< 50 ms)");
    row("binary launch to first /health 200", `${median(starts).toFixed(1)} ms`, "", median(starts) < 100 ? "ok (< 100 ms)" : "MISS (< 100 ms)");
    row("binary size", `${(Bun.file(binaryPath).size / 1024 / 1024).toFixed(1)} MB`);
  } else {
    row("binary", "not built", "run `bun run build` first");
  }
} finally {
  for (const child of children) child.kill();
  rmSync(dir, { recursive: true, force: true });
}

const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
console.log(`\nparley bench · ${new Date().toISOString()} · ${cores} cores · bun ${Bun.version}${quick ? " · quick" : ""}`);
for (const r of rows) console.log(r.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd());
if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify(results, null, 2)}\n`);

/** Portkey's gateway from the npm registry, run on Bun, installed into a temporary directory. */
async function startPeer(): Promise<string> {
  const peerDir = join(dir, "peer");
  Bun.spawnSync(["mkdir", "-p", peerDir]);
  writeFileSync(join(peerDir, "package.json"), '{"name":"peer","private":true}');
  const install = Bun.spawnSync(["bun", "add", "@portkey-ai/gateway"], { cwd: peerDir, stdout: "ignore", stderr: "pipe" });
  if (install.exitCode !== 0) throw new Error(`could not install @portkey-ai/gateway: ${install.stderr}`);
  const port = freePort();
  const proc = Bun.spawn(["bun", "node_modules/@portkey-ai/gateway/build/start-server.js", `--port=${port}`, "--headless"], {
    cwd: peerDir, env: { ...process.env, NODE_ENV: "production" }, stdout: "ignore", stderr: "ignore",
  });
  children.push(proc);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 500 && !(await fetch(url).then(() => true, () => false)); i++) await Bun.sleep(20);
  return url;
}
