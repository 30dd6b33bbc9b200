/** Contract 16: misses, auto, cassettes side by side, concurrent writes, repeated calls, failures replayed. */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { testApp, testConfig } from "../lib/app.ts";
import { ConfigError } from "../../src/config.ts";
import { missing } from "../../src/routing/upstreams.ts";
import { harErrors, readHar, tempDir } from "./lib.ts";

const openai = await startFakeOpenAI();
afterAll(() => openai.stop());
beforeEach(() => openai.reset());

const chat = (content: string | string[], extra: object = {}) => ({
  model: "gpt-4o",
  messages: (Array.isArray(content) ? content : [content]).map((c, i) => ({ role: i % 2 ? "assistant" : "user", content: c })),
  ...extra,
});
/** A gateway on the fake OpenAI with cassettes in `dir`. */
const gateway = (dir: string, mode: string, env: Record<string, string> = {}) =>
  testApp({ ALPHA_BASE_URL: openai.url, ALPHA_API_KEY: "sk-proj-modes0123456789", PARLEY_CASSETTES: dir, PARLEY_CASSETTE_MODE: mode, ...env });
const textOf = async (response: Response) => ((await response.json()) as any).choices[0].message.content as string;
const inCassette = (name: string) => ({ headers: { "x-parley-cassette": name } });

async function recordOne(dir: string, body: object, env: Record<string, string> = {}) {
  const recorder = gateway(dir, "record", env);
  const response = await recorder.json("/v1/chat/completions", body);
  expect(response.status).toBe(200);
  await response.text();
  await recorder.app.close();
}

describe("a replay miss", () => {
  test("is a 404 not_found_error naming the cassette and the first difference from the nearest recording; nothing goes upstream", async () => {
    const dir = tempDir();
    await recordOne(dir, chat(["first question", "an answer", "the third message"]));
    await recordOne(dir, chat(["something else entirely"]));
    openai.reset();
    const replayer = gateway(dir, "replay");
    const response = await replayer.json("/v1/chat/completions", chat(["first question", "an answer", "the third message, changed"]));
    expect(response.status).toBe(404);
    const { error } = (await response.json()) as any;
    expect(error.type).toBe("not_found_error");
    expect(error.message).toContain(join(dir, "default.har"));
    expect(error.message).toContain("upstream 'alpha' (openai)");
    expect(error.message).toContain("differs at messages[2].content");
    expect(openai.received.length).toBe(0);
    await replayer.app.close();
  });

  test("in the Anthropic dialect for /v1/messages, and names a cassette that does not exist", async () => {
    const dir = tempDir();
    const replayer = gateway(dir, "replay");
    const response = await replayer.json("/v1/messages", { model: "gpt-4o", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }, inCassette("nothing-here"));
    expect(response.status).toBe(404);
    const body = (await response.json()) as any;
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("not_found_error");
    expect(body.error.message).toContain(join(dir, "nothing-here.har"));
    expect(openai.received.length).toBe(0);
  });

  test("a body that is not the same once key order is ignored misses; one that is, matches", async () => {
    const dir = tempDir();
    await recordOne(dir, { model: "gpt-4o", temperature: 0.5, messages: [{ role: "user", content: "hi" }] });
    const replayer = gateway(dir, "replay");
    const reordered = await replayer.json("/v1/chat/completions", { messages: [{ content: "hi", role: "user" }], temperature: 0.5, model: "gpt-4o" });
    expect(reordered.status).toBe(200);
    const changed = await replayer.json("/v1/chat/completions", { model: "gpt-4o", temperature: 0.7, messages: [{ role: "user", content: "hi" }] });
    expect(changed.status).toBe(404);
    expect(((await changed.json()) as any).error.message).toContain("differs at temperature (sent 0.7, recorded 0.5)");
  });
});

describe("modes", () => {
  test("auto replays what the cassette holds and records the rest", async () => {
    const dir = tempDir();
    openai.next({ kind: "reply", text: "recorded before" });
    await recordOne(dir, chat("old question"));
    openai.reset();
    const auto = gateway(dir, "auto");
    openai.next({ kind: "reply", text: "asked now" });
    expect(await textOf(await auto.json("/v1/chat/completions", chat("old question")))).toBe("recorded before");
    expect(openai.received.length).toBe(0);
    expect(await textOf(await auto.json("/v1/chat/completions", chat("new question")))).toBe("asked now");
    expect(openai.received.length).toBe(1);
    await auto.app.close();
    expect(readHar(join(dir, "default.har")).log.entries.length).toBe(2);
    openai.reset();
    const replayer = gateway(dir, "replay");
    expect(await textOf(await replayer.json("/v1/chat/completions", chat("new question")))).toBe("asked now");
    expect(openai.received.length).toBe(0);
  });

  test("two cassettes side by side, named by x-parley-cassette: the same question answered by each as it was recorded", async () => {
    const dir = tempDir();
    const recorder = gateway(dir, "record");
    openai.next({ kind: "reply", text: "answer of A" }, { kind: "reply", text: "answer of B" });
    expect(await textOf(await recorder.json("/v1/chat/completions", chat("same"), inCassette("suite-a")))).toBe("answer of A");
    expect(await textOf(await recorder.json("/v1/chat/completions", chat("same"), inCassette("suite-b")))).toBe("answer of B");
    await recorder.app.close();
    expect(readdirSync(dir).sort()).toEqual(["suite-a.har", "suite-b.har"]);
    const replayer = gateway(dir, "replay");
    expect(await textOf(await replayer.json("/v1/chat/completions", chat("same"), inCassette("suite-b")))).toBe("answer of B");
    expect(await textOf(await replayer.json("/v1/chat/completions", chat("same"), inCassette("suite-a")))).toBe("answer of A");
  });

  test("repeated identical calls replay in recorded order, then from the first again; recording again replaces them", async () => {
    const dir = tempDir();
    const recorder = gateway(dir, "record");
    openai.next({ kind: "reply", text: "one" }, { kind: "reply", text: "two" }, { kind: "reply", text: "three" });
    for (let i = 0; i < 3; i++) await recorder.json("/v1/chat/completions", chat("again"));
    await recorder.app.close();
    const replayer = gateway(dir, "replay");
    const answers: string[] = [];
    for (let i = 0; i < 4; i++) answers.push(await textOf(await replayer.json("/v1/chat/completions", chat("again"))));
    expect(answers).toEqual(["one", "two", "three", "one"]);
    openai.next({ kind: "reply", text: "fresh" });
    await recordOne(dir, chat("again"));
    expect(readHar(join(dir, "default.har")).log.entries.map((e) => JSON.parse(e.response.content.text!).choices[0].message.content)).toEqual(["fresh"]);
  });

  test("concurrent requests writing one cassette: every entry is there, whole, and replays", async () => {
    const dir = tempDir();
    const recorder = gateway(dir, "record");
    const n = 40;
    const questions = Array.from({ length: n }, (_, i) => `question ${i}`);
    const streamed = (i: number) => i % 2 === 0;
    const live = await Promise.all(questions.map(async (q, i) => (await recorder.json("/v1/chat/completions", chat(q, { stream: streamed(i) }), inCassette("busy"))).text()));
    await recorder.app.close();
    const har = readHar(join(dir, "busy.har"));
    expect(harErrors(har)).toEqual([]);
    expect(har.log.entries.length).toBe(n);
    expect(new Set(har.log.entries.map((e) => JSON.parse(e.request.postData!.text).messages[0].content))).toEqual(new Set(questions));
    expect(readdirSync(dir)).toEqual(["busy.har"]); // no temporary file left
    const replayer = gateway(dir, "replay");
    const replayed = await Promise.all(questions.map(async (q, i) => (await replayer.json("/v1/chat/completions", chat(q, { stream: streamed(i) }), inCassette("busy"))).text()));
    expect(replayed).toEqual(live);
  });

  test("a cassette name with a path separator is refused (400), and nothing is written", async () => {
    const dir = tempDir();
    const recorder = gateway(join(dir, "cassettes"), "record");
    for (const name of ["../escape", "a/b", "..", ".hidden", "a\\b"]) {
      const response = await recorder.json("/v1/chat/completions", chat("hi"), inCassette(name));
      expect(response.status).toBe(400);
      expect(((await response.json()) as any).error.message).toContain("x-parley-cassette");
    }
    await recorder.app.close();
    expect(readdirSync(dir)).toEqual([]);
    expect(openai.received.length).toBe(0);
  });

  test("the mock is never recorded", async () => {
    const dir = tempDir();
    const recorder = gateway(dir, "record");
    expect((await recorder.json("/v1/chat/completions", { model: "mock", messages: [{ role: "user", content: "hi" }] })).status).toBe(200);
    await recorder.app.close();
    expect(existsSync(join(dir, "default.har"))).toBe(false);
  });
});

describe("failures replay as they were recorded", () => {
  test("a recorded 503 then a success: the retry is replayed too (same answer, same attempts)", async () => {
    const dir = tempDir();
    openai.next({ kind: "error", status: 503, message: "overloaded" }, { kind: "reply", text: "second try" });
    const recorder = gateway(dir, "record", { UPSTREAM_RETRIES: "1" });
    const live = await recorder.json("/v1/chat/completions", chat("retry me"));
    expect(live.headers.get("x-parley-attempts")).toBe("2");
    expect(await textOf(live)).toBe("second try");
    await recorder.app.close();
    const replayer = gateway(dir, "replay", { UPSTREAM_RETRIES: "1" });
    const replayed = await replayer.json("/v1/chat/completions", chat("retry me"));
    expect(replayed.headers.get("x-parley-attempts")).toBe("2");
    expect(await textOf(replayed)).toBe("second try");
  });

  test("a recorded 503 that spent the tries replays as the same 503; a fallback model answers as it did", async () => {
    const dir = tempDir();
    const env = { UPSTREAM_RETRIES: "0", MODEL_FALLBACKS: "gpt-4o=gpt-4o-mini" };
    openai.next({ kind: "error", status: 503, message: "overloaded" }, { kind: "reply", text: "from the fallback" });
    const recorder = gateway(dir, "record", env);
    const live = await recorder.json("/v1/chat/completions", chat("fall back"));
    expect(live.headers.get("x-parley-model")).toBe("gpt-4o-mini");
    expect(await textOf(live)).toBe("from the fallback");
    openai.next({ kind: "error", status: 503, message: "overloaded" });
    const failed = await recorder.json("/v1/chat/completions", chat("fail", { model: "gpt-4o-mini" }));
    expect(failed.status).toBe(503);
    const failure = await failed.json();
    await recorder.app.close();
    const replayer = gateway(dir, "replay", env);
    const replayed = await replayer.json("/v1/chat/completions", chat("fall back"));
    expect(replayed.headers.get("x-parley-model")).toBe("gpt-4o-mini");
    expect(await textOf(replayed)).toBe("from the fallback");
    const again = await replayer.json("/v1/chat/completions", chat("fail", { model: "gpt-4o-mini" }));
    expect(again.status).toBe(503);
    expect(await again.json()).toEqual(failure);
  });

  test("an upstream that could not be reached replays as unreachable (status 0 in the HAR)", async () => {
    const dir = tempDir();
    const closed = Bun.serve({ port: 0, fetch: () => new Response() });
    const url = `http://127.0.0.1:${closed.port}/v1`;
    closed.stop(true);
    const env = { ALPHA_BASE_URL: url, UPSTREAM_RETRIES: "0" };
    const recorder = gateway(dir, "record", env);
    const live = await recorder.json("/v1/chat/completions", chat("anyone there?"));
    expect(live.status).toBe(503);
    const failure = await live.json();
    await recorder.app.close();
    const har = readHar(join(dir, "default.har"));
    expect(harErrors(har)).toEqual([]);
    expect(har.log.entries[0]!.response).toMatchObject({ status: 0, _error: { name: expect.any(String), message: expect.any(String) } });
    const replayer = gateway(dir, "replay", env);
    const replayed = await replayer.json("/v1/chat/completions", chat("anyone there?"));
    expect(replayed.status).toBe(503);
    expect(await replayed.json()).toEqual(failure);
  });
});

describe("pace", () => {
  test("PARLEY_REPLAY_PACE=recorded keeps the recorded gaps between a stream's chunks", async () => {
    const dir = tempDir();
    openai.next({ kind: "stream", chunks: ["a", "b", "c"], gapMs: 150 });
    await recordOne(dir, chat("slowly", { stream: true }));
    const chunks = readHar(join(dir, "default.har")).log.entries[0]!.response.content._chunks!;
    const recordedSpan = chunks.at(-1)!.time - chunks[0]!.time;
    expect(recordedSpan).toBeGreaterThanOrEqual(300);
    const paced = gateway(dir, "replay", { PARLEY_REPLAY_PACE: "recorded" });
    const started = performance.now();
    const response = await paced.json("/v1/chat/completions", chat("slowly", { stream: true }));
    const text = await response.text();
    // A lower bound only: a busy machine makes it longer, never shorter.
    expect(performance.now() - started).toBeGreaterThanOrEqual(recordedSpan - 5);
    expect(text).toContain('"content":"c"');
  });
});

describe("without --cassettes", () => {
  test("nothing changes: no upstream carries a recording fetch; only the reply cap (contract 25) wraps the global fetch", () => {
    const plain = testApp({ ALPHA_BASE_URL: openai.url });
    expect(plain.app.upstreams.current().declared.upstreams.map((u) => [u.kind, typeof u.fetch])).toEqual([["openai", "function"], ["bedrock", "function"], ["mock", "undefined"]]);
    const recording = gateway(tempDir(), "record");
    const withFetch = recording.app.upstreams.current().declared.upstreams.map((u) => [u.kind, typeof u.fetch]);
    expect(withFetch).toEqual([["openai", "function"], ["bedrock", "function"], ["mock", "undefined"]]);
  });
});

describe("configuration", () => {
  test("the mode is record, replay (the default) or auto; recording needs one worker", () => {
    expect(testConfig({ PARLEY_CASSETTES: "cassettes" }).cassettes).toEqual({ dir: "cassettes", mode: "replay", pace: "fast" });
    expect(() => testConfig({ PARLEY_CASSETTES: "cassettes", PARLEY_CASSETTE_MODE: "playback" })).toThrow("PARLEY_CASSETTE_MODE=\"playback\" (from env) is invalid: expected one of record, replay, auto");
    expect(() => testConfig({ PARLEY_CASSETTES: "cassettes", PARLEY_CASSETTE_MODE: "record", WORKERS: "2" })).toThrow(ConfigError);
    expect(testConfig({ PARLEY_CASSETTES: "cassettes", WORKERS: "4" }).workers).toBe(4);
    expect(testConfig({}).cassettes).toBeUndefined();
  });

  test("replay needs no keys: every upstream counts as configured; recording still needs them", () => {
    const replaying = testConfig({ PARLEY_CASSETTES: "cassettes", BETA_REGION: "us-east-1" });
    expect(replaying.upstreams.upstreams.map((u) => [u.name, missing(u)])).toEqual([["alpha", undefined], ["beta", undefined], ["mock", undefined]]);
    const recording = testConfig({ PARLEY_CASSETTES: "cassettes", PARLEY_CASSETTE_MODE: "record", BETA_REGION: "us-east-1" });
    expect(missing(recording.upstreams.upstreams[0]!)).toContain("ALPHA_API_KEY");
  });
});
