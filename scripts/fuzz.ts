/**
 * `bun run fuzz [--seed N] [--count N] [--concurrency N] [--fault-rate 0..1]`: generated malformed
 * requests over every endpoint, some to upstreams that misbehave, against `parley serve` as a real
 * process (LOG_LEVEL=debug). Prints the seed first, so a failing run can be replayed; exits 1 on any
 * failure. See docs/development.md, "Fuzzing".
 */
import { parseArgs } from "node:util";
import { ENDPOINTS, faultSweep, generate, type Context } from "../test/fuzz/cases.ts";
import { describeFailure, missingRoutes, NATIVE_PROBES, runCases, summary } from "../test/fuzz/run.ts";
import { afterRun, MAX_UPLOAD_BYTES, SECRETS, startSession, UPSTREAM_TIMEOUT_MS } from "../test/fuzz/session.ts";
import { rng } from "../test/fuzz/values.ts";

const { values } = parseArgs({
  options: {
    seed: { type: "string" },
    count: { type: "string", default: "3000" },
    concurrency: { type: "string", default: "8" },
    "fault-rate": { type: "string", default: "0.25" },
    only: { type: "string" },
  },
});
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const count = Number(values.count);
console.log(`fuzz seed ${seed} (replay: bun run fuzz --seed ${seed} --count ${count})`);

/**
 * Memory bounds, over the RSS after warm-up. The largest bodies sent are about 2 MB; a few copies
 * of one (bytes, text, parsed, re-encoded upstream) for each of 8 concurrent requests stays under
 * 300 MB at the peak. After the run the garbage is mostly collected; what stays is Bun's heap
 * not yet given back, which measured 0-40 MB: 100 MB more is a leak.
 */
const RSS_PEAK_LIMIT_MB = 300;
const RSS_GROWTH_LIMIT_MB = 100;

const session = await startSession();
let failed = false;
try {
  const skip = await missingRoutes(session.send, SECRETS.API_KEY, NATIVE_PROBES);
  if (skip.size) console.log(`routes missing in this build, skipped: ${[...skip].join(", ")}`);
  const endpoints = ENDPOINTS.filter((e) => !skip.has(e.name) && (!values.only || values.only.split(",").includes(e.name)));
  const ctx: Context = { apiKey: SECRETS.API_KEY, maxUploadBytes: MAX_UPLOAD_BYTES, faultRate: Number(values["fault-rate"]), fileIds: [] };

  // Warm-up: load every lazily built part (providers, files, docs) before the first RSS sample.
  await runCases(generate(seed + 1, 60, endpoints, ctx, rng), { send: session.send, secrets: [], timeoutMs: 30_000, concurrency: 4 });
  // The tokenizer too (about 45 MB, loaded by the first estimate), whatever the warm-up's cases were.
  const estimate = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
  await (await session.send(new Request("http://127.0.0.1/v1/messages/count_tokens", { method: "POST", body: estimate, headers: { "x-api-key": SECRETS.API_KEY, "content-type": "application/json", "anthropic-version": "2023-06-01" } }))).text();
  const before = session.rss();

  const started = performance.now();
  const cases = generate(seed, count, endpoints, ctx, rng);
  const report = await runCases(cases, {
    send: session.send,
    secrets: Object.values(SECRETS),
    timeoutMs: 15_000 + 4 * UPSTREAM_TIMEOUT_MS,
    concurrency: Number(values.concurrency),
    skip,
    onFile: (id) => ctx.fileIds.push(id),
  });
  // Every fault once more, streamed and not, as valid requests: each must end as a failure.
  const sweep = await runCases(faultSweep(seed, SECRETS.API_KEY, rng), { send: session.send, secrets: Object.values(SECRETS), timeoutMs: 15_000 + 4 * UPSTREAM_TIMEOUT_MS, concurrency: Number(values.concurrency) });
  report.failures.push(...sweep.failures);
  await Bun.sleep(1000);
  const after = session.rss();
  const seconds = (performance.now() - started) / 1000;

  console.log(`generated: ${summary(report)}`);
  console.log(`fault sweep: ${summary(sweep)}`);
  console.log(`upstream calls ${session.upstream.seen.calls} (faults: ${[...session.upstream.seen.byFault.keys()].length} kinds); ${seconds.toFixed(1)} s`);
  const peak = session.peakRss();
  console.log(`server RSS: ${before.toFixed(0)} MB after warm-up, peak ${peak.toFixed(0)} MB, ${after.toFixed(0)} MB after the run (limits: peak +${RSS_PEAK_LIMIT_MB} MB, after +${RSS_GROWTH_LIMIT_MB} MB)`);
  for (const failure of report.failures) console.log(`FAIL ${describeFailure(failure)}`);
  const problems = await afterRun(session);
  if (peak - before > RSS_PEAK_LIMIT_MB) problems.push(`RSS peaked ${(peak - before).toFixed(0)} MB over the warm-up level`);
  if (after - before > RSS_GROWTH_LIMIT_MB) problems.push(`RSS grew by ${(after - before).toFixed(0)} MB`);
  for (const problem of problems) console.log(`FAIL ${problem}`);
  failed = report.failures.length > 0 || problems.length > 0;
  console.log(failed ? `fuzz FAILED (seed ${seed})` : `fuzz passed (seed ${seed})`);
} finally {
  await session.stop();
}
process.exit(failed ? 1 : 0);
