import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp } from "../lib/app.ts";
import { startFaultyUpstream, type FaultyUpstream } from "../lib/faulty-upstream.ts";
import { ENDPOINTS, generate } from "./cases.ts";
import { describeFailure, missingRoutes, NATIVE_PROBES, runCases, summary, type Send } from "./run.ts";
import { fuzzEnv, MAX_UPLOAD_BYTES, SECRETS } from "./session.ts";
import { rng } from "./values.ts";

/**
 * The bounded, in-process part of the fuzz (`bun run fuzz` runs thousands against a real server):
 * a fixed seed, so a failure here reproduces exactly. Every endpoint, malformed every way, some
 * calls to upstreams that misbehave.
 */
const SEED = 12;
const COUNT = 400;

let upstream: FaultyUpstream;
let send: Send;

beforeAll(async () => {
  upstream = await startFaultyUpstream();
  const dir = mkdtempSync(join(tmpdir(), "parley-fuzz-"));
  const { app } = testApp({ ...fuzzEnv(dir), ALPHA_BASE_URL: upstream.openaiUrl, BETA_ENDPOINT_URL: upstream.bedrockUrl });
  send = (request) => app.handle(request);
});

afterAll(() => upstream.stop());

test(`${COUNT} generated malformed requests (seed ${SEED}): envelope, no 500, request id, no secret, streams end`, async () => {
  const skip = await missingRoutes(send, SECRETS.API_KEY, NATIVE_PROBES);
  const endpoints = ENDPOINTS.filter((e) => !skip.has(e.name));
  const ctx = { apiKey: SECRETS.API_KEY, maxUploadBytes: MAX_UPLOAD_BYTES, faultRate: 0.15, fileIds: [] as string[] };
  const report = await runCases(generate(SEED, COUNT, endpoints, ctx, rng), {
    send, secrets: Object.values(SECRETS), timeoutMs: 15_000, concurrency: 4, onFile: (id) => ctx.fileIds.push(id),
  });
  console.log(summary(report));
  expect(report.failures.map(describeFailure)).toEqual([]);
  expect(report.sent).toBe(COUNT);
  // The mix reached the answers it is meant to: successes, refusals and upstream failures.
  for (const status of [200, 400, 401, 404, 422, 503]) expect(report.byStatus.get(status) ?? 0).toBeGreaterThan(0);
}, 120_000);
