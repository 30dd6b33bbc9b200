import { afterAll, beforeAll, expect, test } from "bun:test";
import { ENDPOINTS, faultSweep, generate } from "./cases.ts";
import { describeFailure, missingRoutes, NATIVE_PROBES, runCases, summary } from "./run.ts";
import { afterRun, MAX_UPLOAD_BYTES, SECRETS, startSession, UPSTREAM_TIMEOUT_MS, type Session } from "./session.ts";
import { rng } from "./values.ts";

/**
 * The end-to-end part: `parley serve` as a real process at LOG_LEVEL=debug, most calls going to
 * an upstream that resets, stalls, sends garbage, HTML, wrong shapes or broken event-stream frames.
 * Beyond each answer: the server lives, its log holds no secret or stack trace, no upstream
 * connection stays open, no upload leaves bytes behind, and its memory stays bounded.
 */
const SEED = 1212;
const COUNT = 250;
/** See scripts/fuzz.ts for why: a few copies of a 2 MB body for each of 8 concurrent requests. */
const RSS_PEAK_LIMIT_MB = 300;
const RSS_GROWTH_LIMIT_MB = 100;

let session: Session;
beforeAll(async () => {
  session = await startSession();
});
afterAll(() => session.stop());

test(`${COUNT} requests (seed ${SEED}), most to faulty upstreams, against a real server`, async () => {
  const skip = await missingRoutes(session.send, SECRETS.API_KEY, NATIVE_PROBES);
  const endpoints = ENDPOINTS.filter((e) => !skip.has(e.name));
  const ctx = { apiKey: SECRETS.API_KEY, maxUploadBytes: MAX_UPLOAD_BYTES, faultRate: 0.8, fileIds: [] as string[] };
  await runCases(generate(SEED + 1, 40, endpoints, ctx, rng), { send: session.send, secrets: [], timeoutMs: 30_000, concurrency: 4 });
  const before = session.rss();

  const report = await runCases(generate(SEED, COUNT, endpoints, ctx, rng), {
    send: session.send, secrets: Object.values(SECRETS), timeoutMs: 15_000 + 4 * UPSTREAM_TIMEOUT_MS, concurrency: 8, onFile: (id) => ctx.fileIds.push(id),
  });
  await Bun.sleep(500);
  console.log(summary(report), `; upstream calls ${session.upstream.seen.calls}; RSS ${before.toFixed(0)} -> peak ${session.peakRss().toFixed(0)} -> ${session.rss().toFixed(0)} MB`);
  expect(report.failures.map(describeFailure)).toEqual([]);
  expect(session.upstream.seen.byFault.size).toBeGreaterThan(15);
  expect(session.peakRss() - before).toBeLessThan(RSS_PEAK_LIMIT_MB);
  expect(session.rss() - before).toBeLessThan(RSS_GROWTH_LIMIT_MB);
}, 180_000);

test("every fault, streamed and not, ends as a failure in the reply's dialect (or is rescued by a fallback)", async () => {
  const cases = faultSweep(SEED, SECRETS.API_KEY, rng);
  const report = await runCases(cases, { send: session.send, secrets: Object.values(SECRETS), timeoutMs: 15_000 + 4 * UPSTREAM_TIMEOUT_MS, concurrency: 8 });
  console.log(summary(report));
  expect(report.failures.map(describeFailure)).toEqual([]);
  expect(report.sent).toBe(cases.length);
}, 180_000);

test("afterwards: the server serves, its debug log holds no secret or stack trace, no upstream connection or upload part is left", async () => {
  expect(await afterRun(session)).toEqual([]);
}, 60_000);
