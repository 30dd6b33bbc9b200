/** A runtime key's budget on real requests (contract 19): held before the call, settled after it, on every front door. */
import { afterAll, describe, expect, test } from "bun:test";
import { startGateway } from "../lib/gateway.ts";

const gateway = await startGateway({ RATE_LIMIT_RPM: "0", UPSTREAM_RETRIES: "0" });
const url = gateway.listen();
afterAll(async () => {
  await gateway.app.close();
  await gateway.stop();
});

const MODEL = "gpt-4o-mini";
const HI = [{ role: "user", content: "hi" }];

async function budgeted(name: string, tokens: number): Promise<{ id: string; key: string }> {
  const response = await gateway.json("/admin/v1/keys", { name, budget: { tokens, period: "week" } });
  expect(response.status).toBe(201);
  return response.json();
}

const spendOf = async (id: string) => (await (await gateway.call(`/admin/v1/keys/${id}`)).json()).spend as { used: number; reserved: number; period: string };

/** Waits, with a generous deadline, until nothing is held (a stream settles once its end has been written). */
async function settled(id: string) {
  const deadline = Date.now() + 10_000;
  for (let spend = await spendOf(id); ; spend = await spendOf(id)) {
    if (spend.reserved === 0 || Date.now() > deadline) return spend;
    await Bun.sleep(10);
  }
}

describe("a runtime key's budget", () => {
  test("a JSON reply settles with what the upstream billed, on each dialect", async () => {
    const { id, key } = await budgeted("json", 1_000_000);
    gateway.openai.next({ kind: "reply", text: "ok", usage: [11, 7] }, { kind: "reply", text: "ok", usage: [11, 7] }, { kind: "reply", text: "ok", usage: [11, 7] });
    const headers = { authorization: `Bearer ${key}` };
    expect((await gateway.json("/v1/chat/completions", { model: MODEL, messages: HI }, { key: null, headers })).status).toBe(200);
    expect((await gateway.json("/v1/messages", { model: MODEL, max_tokens: 50, messages: HI }, { key: null, headers })).status).toBe(200);
    expect((await gateway.json(`/model/${MODEL}/converse`, { messages: [{ role: "user", content: [{ text: "hi" }] }] }, { key: null, headers })).status).toBe(200);
    expect(await settled(id)).toMatchObject({ used: 3 * 18, reserved: 0 });
  });

  test("a stream holds its reservation until it ends, then settles", async () => {
    const { id, key } = await budgeted("stream", 1_000_000);
    gateway.openai.next({ kind: "stream", chunks: ["a", "b", "c"], usage: [9, 3], gapMs: 200 });
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, max_tokens: 100, stream: true, stream_options: { include_usage: true }, messages: HI }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    // Mid-stream: held (the estimate and max_tokens), nothing used yet.
    expect(await spendOf(id)).toMatchObject({ used: 0, reserved: expect.any(Number) });
    expect((await spendOf(id)).reserved).toBeGreaterThanOrEqual(100);
    while (!(await reader.read()).done);
    expect(await settled(id)).toMatchObject({ used: 12, reserved: 0 });
  });

  test("an upstream error or a client that leaves releases the hold: nothing is spent", async () => {
    const { id, key } = await budgeted("errors", 1_000_000);
    gateway.openai.next({ kind: "error", status: 500, message: "boom" });
    const failed = await gateway.json("/v1/chat/completions", { model: MODEL, messages: HI }, { key: null, headers: { authorization: `Bearer ${key}` } });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(await settled(id)).toMatchObject({ used: 0, reserved: 0 });

    gateway.openai.next({ kind: "stream", chunks: Array.from({ length: 50 }, () => "x"), gapMs: 100 });
    const leaving = new AbortController();
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: "POST", signal: leaving.signal,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, stream: true, messages: HI }),
    });
    await response.body!.getReader().read();
    expect((await spendOf(id)).reserved).toBeGreaterThan(0);
    leaving.abort();
    expect(await settled(id)).toMatchObject({ used: 0, reserved: 0 });
  });

  test("a request that may cost more than the whole budget is refused before any call, saying to lower max_tokens", async () => {
    const { key } = await budgeted("tiny", 50);
    gateway.reset();
    const refused = await gateway.json("/v1/messages", { model: MODEL, max_tokens: 4000, messages: HI }, { key: null, headers: { "x-api-key": key } });
    expect(refused.status).toBe(429);
    const body = await refused.json();
    expect(body.type).toBe("error");
    expect(body.error).toMatchObject({ type: "rate_limit_error", message: expect.stringContaining("lower max_tokens") });
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(gateway.openai.received).toHaveLength(0);
  });

  test("embeddings hold only their input, and settle with what the upstream counted", async () => {
    const { id, key } = await budgeted("embedder", 50);
    const answer = await gateway.json("/v1/embeddings", { model: "text-embedding-3-small", input: "one two three" }, { key: null, headers: { authorization: `Bearer ${key}` } });
    expect(answer.status).toBe(200);
    expect(await settled(id)).toMatchObject({ used: 3, reserved: 0 });
  });
});
