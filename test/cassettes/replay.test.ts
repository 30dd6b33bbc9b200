/**
 * Contract 16: record against the fake upstreams, stop them, replay with no keys: every endpoint
 * and every kind answers as it did, streams event by event, usage records included.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { createCassettes } from "../../src/cassettes/cassettes.ts";
import { createLogger } from "../../src/log.ts";
import type { Upstream } from "../../src/providers/kind.ts";
import { anthropicEvents, chunkFrame, converseEvents, eventFrame, startFakeBedrock } from "../lib/fake-bedrock.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { testApp } from "../lib/app.ts";
import { harErrors, readHar, stable, tempDir } from "./lib.ts";

const CLAUDE = "anthropic.claude-3-5-sonnet-20241022-v2:0";
const NOVA = "amazon.nova-micro-v1:0";
const hi = [{ role: "user", content: "hi" }];

/** One request per endpoint, kind and wire call: [what, path, body]. */
const CALLS: [string, string, object][] = [
  ["OpenAI chat", "/v1/chat/completions", { model: "gpt-4o", messages: hi }],
  ["OpenAI chat, streamed", "/v1/chat/completions", { model: "gpt-4o", stream: true, messages: hi }],
  ["OpenAI Responses", "/v1/responses", { model: "gpt-4o", input: "hi" }],
  ["OpenAI Responses, streamed", "/v1/responses", { model: "gpt-4o", input: "hi", stream: true }],
  ["/v1/messages to OpenAI, streamed", "/v1/messages", { model: "gpt-4o", max_tokens: 50, stream: true, messages: hi }],
  ["Bedrock InvokeModel", "/v1/chat/completions", { model: CLAUDE, messages: hi }],
  ["Bedrock InvokeModelWithResponseStream", "/v1/chat/completions", { model: CLAUDE, stream: true, stream_options: { include_usage: true }, messages: hi }],
  ["Bedrock Converse", "/v1/chat/completions", { model: NOVA, messages: hi }],
  ["Bedrock ConverseStream", "/v1/chat/completions", { model: NOVA, stream: true, messages: hi }],
  ["/v1/messages to Bedrock", "/v1/messages", { model: CLAUDE, max_tokens: 50, messages: hi }],
  ["/v1/messages to Bedrock, streamed", "/v1/messages", { model: CLAUDE, max_tokens: 50, stream: true, messages: hi }],
  ["Bedrock CountTokens", "/v1/messages/count_tokens", { model: CLAUDE, messages: hi }],
];

const dir = tempDir();
const openai = await startFakeOpenAI();
const bedrock = await startFakeBedrock();
const upstreams = { ALPHA_BASE_URL: openai.url, BETA_REGION: "us-east-1", BETA_ENDPOINT_URL: bedrock.url, BETA_CONTROL_ENDPOINT_URL: bedrock.url, PARLEY_CASSETTES: dir, MODELS_REFRESH_S: "600" };
const keys = { ALPHA_API_KEY: "sk-proj-upstreamkey0123456789", BETA_ACCESS_KEY_ID: "AKIAFAKEFAKEFAKE", BETA_SECRET_ACCESS_KEY: "fake-secret-access-key" };
afterAll(() => {
  openai.stop();
  bedrock.stop();
});

interface Answer {
  status: number;
  contentType: string | null;
  text: string;
}
const ask = async (app: ReturnType<typeof testApp>, [, path, body]: (typeof CALLS)[number], tag: string): Promise<Answer> => {
  const response = await app.json(path, body, { headers: { "x-parley-tag": tag, "x-parley-cassette": "suite" } });
  return { status: response.status, contentType: response.headers.get("content-type"), text: stable(await response.text()) };
};
const usageOf = async (app: ReturnType<typeof testApp>) => {
  expect((await app.call("/v1/usage")).status).toBe(200);
  const db = new Database(join(app.config.dataDir, "parley.db"), { readonly: true });
  try {
    return db.query("SELECT tag, endpoint, provider, model, input_tokens, output_tokens, status FROM usage ORDER BY tag").all();
  } finally {
    db.close();
  }
};

const recorder = testApp({ ...upstreams, ...keys, PARLEY_CASSETTE_MODE: "record" });
const recorded: Answer[] = [];
for (const [i, call] of CALLS.entries()) recorded.push(await ask(recorder, call, `call-${i}`));
const recordedModels = await (await recorder.call("/v1/models")).json();
const recordedUsage = await usageOf(recorder);
await recorder.app.close();
openai.stop();
bedrock.stop();

// No keys, and the fakes are gone: every answer comes from the cassette.
const replayer = testApp({ ...upstreams, PARLEY_CASSETTE_MODE: "replay" });
afterAll(() => replayer.app.close());

describe("record, then replay with the upstreams stopped and no keys", () => {
  for (const [i, call] of CALLS.entries()) {
    test(call[0], async () => {
      expect(recorded[i]!.status).toBe(200);
      const replayed = await ask(replayer, call, `call-${i}`);
      expect(replayed).toEqual(recorded[i]!);
    });
  }

  test("model discovery replays too: /v1/models lists what the upstreams listed", async () => {
    const models = await (await replayer.call("/v1/models")).json();
    // The fake OpenAI's own listing, not parley's built-in catalogue.
    expect(recordedModels.data.find((m: { id: string }) => m.id === "gpt-4o-mini")).toMatchObject({ owned_by: "local" });
    expect(models).toEqual(recordedModels);
  });

  test("usage records are written in replay as they were when recorded", async () => {
    const replayedUsage = await usageOf(replayer);
    expect(replayedUsage.length).toBe(CALLS.length - 1); // count_tokens makes no record
    expect(replayedUsage.filter((r: any) => r.input_tokens > 0 && r.output_tokens > 0).length).toBeGreaterThan(5);
    expect(replayedUsage).toEqual(recordedUsage);
  });

  test("the cassette is HAR 1.2 by its JSON schema, one entry per upstream call, streams whole with their chunks", () => {
    const har = readHar(join(dir, "suite.har"));
    expect(harErrors(har)).toEqual([]);
    expect(har.log.entries.length).toBe(CALLS.length);
    expect(har.log.version).toBe("1.2");
    // The chat stream and the /v1/messages stream.
    const invokes = har.log.entries.filter((e) => e.request.url.endsWith("/invoke-with-response-stream"));
    expect(invokes.length).toBe(2);
    for (const { response: { content } } of invokes) {
      expect(content.encoding).toBe("base64");
      expect(content.mimeType).toBe("application/vnd.amazon.eventstream");
      expect(content._chunks!.length).toBeGreaterThan(0);
      expect(content._chunks!.reduce((n, c) => n + c.size, 0)).toBe(content.size);
      expect(Buffer.from(content.text!, "base64").byteLength).toBe(content.size);
    }
    // Every call a request made is in the cassette it named; model discovery, which no request makes, in `default`.
    const discovery = readHar(join(dir, "default.har"));
    expect(harErrors(discovery)).toEqual([]);
    expect(discovery.log.entries.map((e) => `${e.request.method} ${new URL(e.request.url).pathname}`).sort()).toEqual(["GET /foundation-models", "GET /inference-profiles", "GET /inference-profiles", "GET /v1/models"]);
    const sse = har.log.entries.find((e) => e.response.content.mimeType.startsWith("text/event-stream"))!;
    expect(sse.response.content.encoding).toBeUndefined();
    expect(sse.response.content.text).toContain("data: ");
    expect(new Set(har.log.entries.map((e) => `${e._upstream}/${e._kind}`))).toEqual(new Set(["alpha/openai", "beta/bedrock"]));
  });
});

describe("at the upstream boundary", () => {
  const upstream = { name: "beta", kind: "bedrock" } as Upstream;
  const cassettes = createCassettes({ dir, mode: "replay", pace: "fast" }, createLogger("silent"));
  const [replaying] = cassettes.upstreams({ upstreams: [upstream], routes: [] }).upstreams;
  const suite = new Request("http://localhost/", { headers: { "x-parley-cassette": "suite" } });
  const streams = readHar(join(dir, "suite.har")).log.entries.filter((e) => e.request.url.includes("/converse-stream") || e.request.url.includes("/invoke-with-response-stream"));
  const frames = {
    "converse-stream": converseEvents().map((e) => eventFrame(...(Object.entries(e)[0] as [string, object]))),
    "invoke-with-response-stream": anthropicEvents().map(chunkFrame),
  };

  test("a replayed AWS event-stream comes in the recorded chunks, and its bytes are the frames the upstream sent", async () => {
    expect(streams.length).toBe(3);
    for (const entry of streams) {
      const response = await cassettes.within(suite, () => replaying!.fetch!(entry.request.url, { method: "POST", body: entry.request.postData!.text }));
      expect(response.headers.get("content-type")).toBe("application/vnd.amazon.eventstream");
      const chunks: Uint8Array[] = [];
      for await (const chunk of response.body!) chunks.push(chunk);
      expect(chunks.map((c) => c.byteLength)).toEqual(entry.response.content._chunks!.map((c) => c.size));
      const action = entry.request.url.includes("/converse-stream") ? "converse-stream" : "invoke-with-response-stream";
      expect(Buffer.concat(chunks)).toEqual(Buffer.concat(frames[action]));
    }
  });
});
