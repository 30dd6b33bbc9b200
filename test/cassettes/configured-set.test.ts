import { afterAll, expect, test } from "bun:test";
import { testApp } from "../lib/app.ts";
import { startFakeBedrock, type FakeAccount } from "../lib/fake-bedrock.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { writeToml } from "../upstreams/fleet.ts";
import { readHar, tempDir } from "./lib.ts";

/**
 * Replay changes nothing about which upstreams are configured (contract 16): recorded with a local
 * server in parley.toml and no ALPHA_* or OPENAI_API_KEY, gpt-4o went to `local`; replayed with no
 * keys at all, it goes there again (the spec's `alpha` is not turned on by replay's stand-in key),
 * and /health says what it said while recording.
 */
const ACCOUNT: FakeAccount = { region: "us-east-1", accessKeyId: "AKIAREPLAYSETACCOUNT", secretAccessKey: "replay-set-secret-0123" };
const [local, bedrock] = await Promise.all([startFakeOpenAI(), startFakeBedrock(ACCOUNT)]);
afterAll(() => (local.stop(), bedrock.stop()));

const { file } = writeToml(`
[upstreams.local]
kind = "openai"
base_url = "${local.url}"
discover = false
`);
const body = { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] };
const health = async (call: ReturnType<typeof testApp>["call"]) => {
  const { services, credentials } = await (await call("/health")).json();
  return { services, credentials };
};

test("the same request goes to the same upstream in replay as while recording, and /health agrees", async () => {
  const dir = tempDir();
  // BETA_* static keys while recording; none in replay (only the region, which the calls are matched on).
  const beta = { BETA_REGION: ACCOUNT.region, BETA_ENDPOINT_URL: bedrock.url };
  const recorder = testApp({ PARLEY_UPSTREAMS: file, PARLEY_CASSETTES: dir, PARLEY_CASSETTE_MODE: "record", ...beta, BETA_ACCESS_KEY_ID: ACCOUNT.accessKeyId, BETA_SECRET_ACCESS_KEY: ACCOUNT.secretAccessKey });
  const recorded = await recorder.json("/v1/chat/completions", body);
  expect(recorded.status).toBe(200);
  expect(recorded.headers.get("x-parley-upstream")).toBe("local");
  const recordedText = await recorded.text();
  const whileRecording = await health(recorder.call);
  expect(whileRecording.services.alpha).toBe("not_configured");
  await recorder.app.close();
  expect(Object.keys(readHar(`${dir}/default.har`).log._upstreams ?? {}).sort()).toEqual(["beta", "local"]);

  local.reset();
  const replayer = testApp({ PARLEY_UPSTREAMS: file, PARLEY_CASSETTES: dir, PARLEY_CASSETTE_MODE: "replay", ...beta });
  const replayed = await replayer.json("/v1/chat/completions", body);
  expect(replayed.status).toBe(200);
  expect(replayed.headers.get("x-parley-upstream")).toBe("local");
  expect(await replayed.text()).toBe(recordedText);
  expect(local.received.length).toBe(0);
  expect(await health(replayer.call)).toEqual(whileRecording);
  await replayer.app.close();
});
