/** GET /admin/v1/events (contract 19): what the dashboard's Live page reads, one event per finished request. */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adminEvents } from "../../src/server/endpoints/admin-events.ts";
import { createSqliteUsageStore, migrateUsage } from "../../src/usage/sqlite-store.ts";
import { hashSession } from "../../src/usage/recorder.ts";
import { startGateway } from "../lib/gateway.ts";

const gateway = await startGateway({ RATE_LIMIT_RPM: "0" });
afterAll(async () => {
  await gateway.app.close();
  await gateway.stop();
});

test("a finished request arrives as one `request` event with its record's fields, its status, latency and hashed session", async () => {
  const abort = new AbortController();
  const stream = await gateway.call("/admin/v1/events", { signal: abort.signal });
  expect(stream.headers.get("content-type")).toBe("text/event-stream");
  const reader = stream.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  // The stream says it is connected before any request is made, so the request below is new to it.
  while (!text.includes(": connected")) text += decoder.decode((await reader.read()).value, { stream: true });

  const answer = await gateway.json("/v1/chat/completions", { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { headers: { "x-parley-session": "claude-session-42", "x-parley-tag": "nightly \"run\"", "x-request-id": "req-events-1" } });
  expect(answer.status).toBe(200);

  const deadline = Date.now() + 10_000;
  while (!text.includes("event: request\n") && Date.now() < deadline) text += decoder.decode((await reader.read()).value, { stream: true });
  abort.abort();
  const blocks = text.split("\n\n").filter((block) => block.startsWith("event: request\n"));
  expect(blocks).toHaveLength(1);
  const event = JSON.parse(blocks[0]!.slice(blocks[0]!.indexOf("data: ") + 6));
  expect(event).toMatchObject({
    endpoint: "/v1/chat/completions", key_label: "main", model_requested: "gpt-4o-mini", provider: "alpha",
    status: 200, outcome: "ok", attempts: 1, tag: "nightly \"run\"", session: hashSession("claude-session-42"), request_id: "req-events-1",
  });
  expect(event.input_tokens).toBeGreaterThan(0);
  expect(event.latency_ms).toBeGreaterThanOrEqual(0);
  expect(typeof event.cost_usd).toBe("number");
  expect(Math.abs(event.time - Date.now())).toBeLessThan(60_000);
});

/** Reads the stream until `done` says it has what it waits for (or 10 s pass); the `request` and `skipped` events read. */
async function readEvents(response: Response, done: (events: { name: string; data: any }[]) => boolean) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const parsed = () =>
    text.split("\n\n").filter((block) => block.startsWith("event: ")).map((block) => ({ name: block.slice(7, block.indexOf("\n")), data: JSON.parse(block.slice(block.indexOf("data: ") + 6)) }));
  const deadline = Date.now() + 10_000;
  while (!done(parsed()) && Date.now() < deadline) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    text += decoder.decode(value, { stream: true });
  }
  void reader.cancel();
  return parsed();
}

test("?last=2 (the Live page's way): each poll sends the newest two, after a `skipped` event counting the rest", async () => {
  const stream = await gateway.call("/admin/v1/events?last=2");
  expect(stream.status).toBe(200);
  for (let i = 1; i <= 5; i++) {
    const answer = await gateway.json("/v1/chat/completions", { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { headers: { "x-request-id": `last-${i}` } });
    expect(answer.status).toBe(200);
  }
  const count = (events: { name: string; data: any }[]) => events.reduce((n, e) => n + (e.name === "skipped" ? e.data.count : 1), 0);
  const events = await readEvents(stream, (seen) => count(seen) >= 5);
  expect(count(events)).toBe(5);
  expect(events.some((e) => e.name === "skipped")).toBe(true);
  expect(events.filter((e) => e.name === "request").length).toBeLessThanOrEqual(4);
  expect(events.at(-1)).toMatchObject({ name: "request", data: { request_id: "last-5" } });
});

test("?last outside 1-1000 is a 400 saying so", async () => {
  for (const last of ["0", "1001", "ten", "2.5"]) {
    const answer = await gateway.call(`/admin/v1/events?last=${last}`);
    expect(answer.status).toBe(400);
    expect((await answer.json()).error.message).toContain("'last' must be a whole number from 1 to 1000");
  }
});

test("a client that stops reading costs the gateway at most the unread limit: the rest are counted, and said once it reads", async () => {
  const dir = mkdtempSync(join(tmpdir(), "parley-events-"));
  const db = new Database(join(dir, "parley.db"));
  migrateUsage(db);
  const insert = db.query("INSERT INTO usage (id, time, endpoint, key_label, status, outcome, latency_ms, attempts) VALUES (?, ?, '/v1/chat/completions', 'main', 200, 'ok', 1, 1)");
  const endpoint = adminEvents(createSqliteUsageStore(() => db), 20, 4096);
  const stream = (await endpoint.answer({ request: new Request("http://127.0.0.1/admin/v1/events"), headers: {}, query: {}, params: [] })) as Response;
  // 400 records of about 300 bytes each, in four goes, with nobody reading.
  for (let round = 0; round < 4; round++) {
    db.transaction(() => {
      for (let i = 0; i < 100; i++) insert.run(`unread-${round}-${i}`, Date.now());
    })();
    await Bun.sleep(60);
  }
  const count = (events: { name: string; data: any }[]) => events.reduce((n, e) => n + (e.name === "skipped" ? e.data.count : 1), 0);
  insert.run("unread-last", Date.now());
  const events = await readEvents(stream, (seen) => count(seen) >= 401);
  expect(count(events)).toBe(401);
  const skipped = events.filter((e) => e.name === "skipped");
  expect(skipped.length).toBeGreaterThan(0);
  // The first poll's hundred went out while the client's share was free; then at most one more before it was read.
  expect(events.filter((e) => e.name === "request").length).toBeLessThanOrEqual(201);
  expect(skipped.reduce((n, e) => n + e.data.count, 0)).toBeGreaterThanOrEqual(200);
  expect(events.at(-1)).toMatchObject({ name: "request", data: { id: "unread-last" } });
  db.close();
  rmSync(dir, { recursive: true, force: true });
});
