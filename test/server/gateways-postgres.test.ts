import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { migratePostgres } from "../../src/lib/postgres.ts";
import { createPostgresUsageStore, MIGRATIONS } from "../../src/usage/postgres-store.ts";
import { hashSession, type UsageRecord } from "../../src/usage/record.ts";
import { TEST_KEY } from "../lib/app.ts";
import { runCli, startCli, userDir } from "../lib/cli.ts";
import { startPostgres } from "../lib/postgres.ts";
import { startRedis, withinOneWindow } from "../lib/redis.ts";

// Several gateways as a team runs them (contract 21): separate processes with their own data
// directories, sharing one Postgres (usage) and one Redis (limits and budgets' counters).
const pg = await startPostgres();
const redis = await startRedis();
afterAll(async () => {
  await Promise.all(running.splice(0).map((gateway) => gateway.stop()));
  await redis.kill();
  await pg.dispose();
});

const CI_KEY = "sk-ci-key-000000000001";
const running: Awaited<ReturnType<typeof startCli>>[] = [];
afterEach(() => Promise.all(running.splice(0).map((gateway) => gateway.stop())));

async function gateways(n: number, databaseUrl: string, env: Record<string, string> = {}, { withRedis = true } = {}) {
  const started = await Promise.all(Array.from({ length: n }, () => {
    const user = userDir();
    return startCli([], {
      cwd: user.dir,
      env: { ...user.env, API_KEY: TEST_KEY, RATE_LIMIT_RPM: "0", ...(withRedis ? { REDIS_URL: redis.url } : {}), DATABASE_URL: databaseUrl, ...env },
    });
  }));
  running.push(...started);
  return started;
}

const chat = (url: string, key = TEST_KEY, text = "hello there", headers: Record<string, string> = {}) =>
  fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "mock", messages: [{ role: "user", content: text }] }),
  });

/** `total` chats spread over the gateways, `concurrency` at a time; the statuses seen. */
async function traffic(urls: string[], total: number, concurrency = 8) {
  const statuses: Record<number, number> = {};
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const response = await chat(urls[next++ % urls.length]!);
      await response.arrayBuffer();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    }
  }));
  return statuses;
}

/** The gateway's /v1/usage; no rows while it cannot read the database (a 503). */
async function usage(url: string, by = "key") {
  const response = await fetch(`${url}/v1/usage?since=1d&by=${by}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
  const body = await response.json();
  return (response.status === 200 ? body : { data: [] }) as { data: { group: string; requests: number; input_tokens: number }[] };
}

async function until(condition: () => Promise<boolean>, ms = 20_000) {
  for (const deadline = Date.now() + ms; !(await condition()); await Bun.sleep(100)) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${condition}`);
  }
}

type Event = { name: string; data: Record<string, unknown> };

/**
 * A gateway's /admin/v1/events, read as it comes: the `request` and `skipped` events so far. The
 * answer's headers come once the stream has its starting point, so every request after is new to it.
 */
async function watchEvents(url: string, query = "") {
  const response = await fetch(`${url}/admin/v1/events${query}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const events: Event[] = [];
  let text = "";
  const reading = (async () => {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      text += decoder.decode(chunk.value, { stream: true });
      const blocks = text.split("\n\n");
      text = blocks.pop()!;
      for (const block of blocks.filter((b) => b.startsWith("event: "))) {
        events.push({ name: block.slice(7, block.indexOf("\n")), data: JSON.parse(block.slice(block.indexOf("data: ") + 6)) });
      }
    }
  })().catch(() => {});
  return {
    events,
    /** The `request` event of the request with this X-Request-Id, once it came. */
    async request(requestId: string) {
      await until(async () => events.some((e) => e.data.request_id === requestId));
      return events.find((e) => e.data.request_id === requestId)!.data;
    },
    async close() {
      await reader.cancel().catch(() => {});
      await reading;
    },
  };
}

/** The upstream's last 5 minutes, as a gateway's /admin/v1/upstreams gives them. */
async function lastMinutes(url: string, upstream: string) {
  const response = await fetch(`${url}/admin/v1/upstreams`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
  const { data } = (await response.json()) as { data: { name: string; last_5m: { requests: number; p50_ms: number | null; p95_ms: number | null; error_rate: number | null } }[] };
  return data.find((u) => u.name === upstream)!.last_5m;
}

describe("several gateways, one database (contract 21)", () => {
  test("three gateways: /v1/usage and `parley usage` give one answer on every gateway", async () => {
    const url = await pg.database("three");
    const three = await gateways(3, url);
    expect(await traffic(three.map((g) => g.url), 90)).toEqual({ 200: 90 });
    const answers = async () => Promise.all(three.map(async (g) => JSON.stringify((await usage(g.url, "model")).data)));
    // Each gateway writes its own records at once before answering, the others' within a second.
    await until(async () => new Set(await answers()).size === 1 && (await usage(three[0]!.url)).data[0]?.requests === 90);
    const [model] = (await usage(three[1]!.url, "model")).data;
    expect(model).toMatchObject({ group: "mock", requests: 90 });
    const user = userDir();
    const cli = await runCli(["usage", "--json", "--since", "1d"], { env: { ...user.env, DATABASE_URL: url } });
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout).data).toEqual((await usage(three[2]!.url, "model")).data);
  }, 90_000);

  test("a key created through the admin API of one gateway answers on the others within a second; revoked on one, refused on all", async () => {
    const url = await pg.database("admin_keys");
    const three = await gateways(3, url);
    const admin = { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" };
    const created = await fetch(`${three[0]!.url}/admin/v1/keys`, { method: "POST", headers: admin, body: JSON.stringify({ name: "teammate" }) });
    expect(created.status).toBe(201);
    const { id, key } = (await created.json()) as { id: string; key: string };
    const started = performance.now();
    for (const g of three.slice(1)) await until(async () => (await chat(g.url, key)).status === 200, 1000);
    expect(performance.now() - started).toBeLessThan(2000); // both, one after the other, each within its second
    expect((await fetch(`${three[2]!.url}/admin/v1/keys/${id}`, { method: "DELETE", headers: admin })).status).toBe(200);
    for (const g of three) await until(async () => (await chat(g.url, key)).status === 401, 1000);
    // Every gateway lists it, revoked, from the one database.
    const listed = await (await fetch(`${three[1]!.url}/admin/v1/keys`, { headers: admin })).json();
    expect(listed.data.find((k: { id: string }) => k.id === id)).toMatchObject({ name: "teammate", revoked_at: expect.any(Number) });
  }, 90_000);

  test("a daily budget is spent across all three (its counter in Redis), refused on every one once over", async () => {
    const url = await pg.database("budget");
    const probe = await gateways(1, url);
    const tokensPerChat = await chat(probe[0]!.url).then(async (r) => (await r.json()).usage.total_tokens as number);
    const three = await gateways(3, url, { API_KEYS: `ci=${CI_KEY}:chat@${3 * tokensPerChat - 1}tokens/day` });
    for (const g of three) expect((await chat(g.url, CI_KEY)).status).toBe(200);
    for (const g of three) {
      await until(async () => {
        const response = await chat(g.url, CI_KEY);
        return response.status === 429 && (await response.text()).includes(`(${3 * tokensPerChat} tokens today)`);
      });
    }
  }, 90_000);

  test("without Redis, the rate limit and the budget count in Postgres: one limit, one budget across the gateways", async () => {
    const url = await pg.database("no_redis");
    const probe = await gateways(1, url, {}, { withRedis: false });
    const tokensPerChat = await chat(probe[0]!.url).then(async (r) => (await r.json()).usage.total_tokens as number);
    const three = await gateways(3, url, { RATE_LIMIT_RPM: "30", API_KEYS: `ci=${CI_KEY}:chat@${3 * tokensPerChat - 1}tokens/day` }, { withRedis: false });
    const urls = three.map((g) => g.url);
    await withinOneWindow(15);
    expect(await traffic(urls, 75)).toEqual({ 200: 30, 429: 45 });
    for (const g of three) expect((await chat(g.url, CI_KEY)).status).toBe(200);
    for (const g of three) {
      await until(async () => {
        const response = await chat(g.url, CI_KEY);
        return response.status === 429 && (await response.text()).includes(`(${3 * tokensPerChat} tokens today)`);
      });
    }
  }, 90_000);

  test("the database stopped and started under traffic: every request answered, no record lost", async () => {
    const url = await pg.database("outage");
    const two = await gateways(2, url);
    const urls = two.map((g) => g.url);
    expect(await traffic(urls, 40)).toEqual({ 200: 40 });
    await until(async () => (await usage(urls[0]!)).data[0]?.requests === 40);
    await pg.stop();
    try {
      expect(await traffic(urls, 60)).toEqual({ 200: 60 });
      // A read writes what is queued first: that write fails, the records stay, the answer is a clear 503.
      for (const u of urls) {
        const response = await fetch(`${u}/v1/usage`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
        expect(response.status).toBe(503);
        expect((await response.json()).error).toMatchObject({ type: "service_unavailable_error", message: expect.stringContaining("usage database") });
      }
      expect(await traffic(urls, 10)).toEqual({ 200: 10 });
    } finally {
      await pg.start();
    }
    expect(await traffic(urls, 20)).toEqual({ 200: 20 });
    await until(async () => (await Promise.all(urls.map((u) => usage(u)))).every((u) => u.data[0]?.requests === 130));
    for (const g of two) {
      const metrics = await (await fetch(`${g.url}/metrics`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).text();
      expect(metrics).toContain("parley_usage_dropped_total 0");
    }
    const sql = new SQL(url);
    expect(await sql`SELECT COUNT(*)::int AS n, COUNT(DISTINCT id)::int AS ids FROM usage`).toEqual([{ n: 130, ids: 130 }]);
    await sql.close();
    for (const g of two) {
      const output = await g.stop();
      expect(output.match(/the database is unreachable/g)).toHaveLength(1);
      expect(output).toContain("the database is back");
      expect(output).not.toContain("postgres://");
    }
  }, 90_000);

  test("past USAGE_BUFFER_MAX while the database is down, records are dropped, counted in /metrics and logged", async () => {
    const url = await pg.database("overflow");
    const [gateway] = await gateways(1, url, { USAGE_BUFFER_MAX: "5" });
    expect(await traffic([gateway!.url], 3)).toEqual({ 200: 3 });
    await until(async () => (await usage(gateway!.url)).data[0]?.requests === 3);
    await pg.stop();
    try {
      expect(await traffic([gateway!.url], 8, 1)).toEqual({ 200: 8 });
      const metrics = await (await fetch(`${gateway!.url}/metrics`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).text();
      expect(metrics).toContain("parley_usage_dropped_total 3");
    } finally {
      await pg.start();
    }
    await until(async () => (await usage(gateway!.url)).data[0]?.requests === 8);
    expect(await gateway!.stop()).toMatch(/5 records wait for the database \(USAGE_BUFFER_MAX\); newer ones are dropped[\s\S]*database is back[\s\S]*3 records were dropped/);
  }, 90_000);

  test("a request through one gateway is a `request` event on another's /admin/v1/events, with SQLite's fields; ?last= there too; /admin/v1/upstreams counts it", async () => {
    const url = await pg.database("events");
    const [one, other] = await gateways(2, url);
    // A gateway on SQLite beside them, for the event as it has always been.
    const user = userDir();
    const local = await startCli([], { cwd: user.dir, env: { ...user.env, API_KEY: TEST_KEY, RATE_LIMIT_RPM: "0" } });
    running.push(local);
    const [shared, own] = await Promise.all([watchEvents(other!.url), watchEvents(local.url)]);
    const headers = (requestId: string) => ({ "x-parley-session": "team-session-7", "x-parley-tag": "nightly \"run\"", "x-request-id": requestId });
    expect((await chat(one!.url, TEST_KEY, "hello there", headers("through-one"))).status).toBe(200);
    expect((await chat(local.url, TEST_KEY, "hello there", headers("through-local"))).status).toBe(200);
    const fromPostgres = await shared.request("through-one");
    const fromSqlite = await own.request("through-local");
    expect(fromPostgres).toMatchObject({
      status: 200, key_label: "main", model: "mock", model_requested: "mock", provider: "mock", request_id: "through-one",
      session: hashSession("team-session-7"), tag: "nightly \"run\"", outcome: "ok", endpoint: "/v1/chat/completions",
    });
    // The same fields in the same order, each of the same type; equal where the request was the same.
    expect(Object.keys(fromPostgres)).toEqual(Object.keys(fromSqlite));
    expect(Object.keys(fromPostgres)).not.toContain("seq");
    for (const [field, value] of Object.entries(fromSqlite)) {
      expect([field, value === null ? "null" : typeof value]).toEqual([field, fromPostgres[field] === null ? "null" : typeof fromPostgres[field]]);
      if (!["id", "request_id", "time", "latency_ms", "ttft_ms"].includes(field)) expect([field, fromPostgres[field]]).toEqual([field, value]);
    }
    expect(typeof fromPostgres.time).toBe("number");
    expect(Math.abs((fromPostgres.time as number) - Date.now())).toBeLessThan(60_000);
    expect(shared.events.filter((e) => e.name === "request")).toHaveLength(1);
    await Promise.all([shared.close(), own.close()]);

    // Five records in one batch, as a gateway writes them: one poll sees them all.
    const newest = await watchEvents(other!.url, "?last=2");
    const store = createPostgresUsageStore(new SQL(url));
    const record = (i: number): UsageRecord => ({
      id: `batch-${i}`, request_id: `last-${i}`, time: Date.now(), endpoint: "/v1/chat/completions", key_label: "main", model_requested: "mock", model: "mock",
      provider: "mock", input_tokens: 3, output_tokens: 5, cache_read_tokens: null, cache_write_tokens: null, cost_usd: 0, status: 200, outcome: "ok",
      latency_ms: 10 * i, ttft_ms: null, attempts: 1, tag: null, route: null, session: null,
    });
    expect(await store.write([1, 2, 3, 4, 5].map(record))).toBe(5);
    await store.close();
    const count = () => newest.events.reduce((n, e) => n + (e.name === "skipped" ? (e.data.count as number) : 1), 0);
    await until(async () => count() >= 5);
    // Usually one `skipped` (3) and the newest two; a poll that read the newest cursor just before the
    // batch committed sends the first two, and the next one skips one.
    expect(count()).toBe(5);
    expect(newest.events.some((e) => e.name === "skipped")).toBe(true);
    expect(newest.events.filter((e) => e.name === "request").length).toBeLessThanOrEqual(4);
    expect(newest.events.slice(-2).map((e) => e.data.request_id)).toEqual(["last-4", "last-5"]);
    await newest.close();

    // The other gateway answered none of the six: its figures are the database's.
    await until(async () => (await lastMinutes(other!.url, "mock")).requests === 6);
    const figures = await lastMinutes(other!.url, "mock");
    expect(figures.p50_ms).toEqual(expect.any(Number));
    expect(figures.p95_ms).toBeGreaterThanOrEqual(figures.p50_ms!);
    expect(figures.error_rate).toBe(0);
    expect(await lastMinutes(one!.url, "mock")).toEqual(figures);
  }, 90_000);

  test("a record committed after a later one (two gateways' writes crossing) still comes as an event", async () => {
    const url = await pg.database("crossing");
    const [gateway] = await gateways(1, url);
    const watch = await watchEvents(gateway!.url);
    const sql = new SQL(url);
    const insert = (tx: SQL, id: string) =>
      tx`INSERT INTO usage (id, request_id, time, endpoint, key_label, status, outcome, latency_ms, attempts) VALUES (${id}, ${id}, ${Date.now()}, '/v1/chat/completions', 'main', 200, 'ok', 1, 1)`;
    const inserted = Promise.withResolvers<void>();
    const commit = Promise.withResolvers<void>();
    const late = sql.begin(async (tx) => {
      await insert(tx, "late"); // numbered first, committed last
      inserted.resolve();
      await commit.promise;
    });
    await inserted.promise;
    await insert(sql, "early");
    // Read: the stream's cursor is past the one `late` holds, not yet committed.
    await watch.request("early");
    commit.resolve();
    await late;
    await watch.request("late");
    expect(watch.events.map((e) => e.data.request_id)).toEqual(["early", "late"]);
    await watch.close();
    await sql.close();
  }, 90_000);

  test("a database of the previous migrations gets the events' cursor at start: its records numbered, new ones tailed", async () => {
    const url = await pg.database("old_schema");
    const sql = new SQL(url);
    await migratePostgres(sql, "usage_migrations", MIGRATIONS.slice(0, 2));
    await sql`INSERT INTO usage (id, time, endpoint, key_label, status, outcome, latency_ms, attempts, provider)
      VALUES ('old-1', ${Date.now()}, '/v1/chat/completions', 'main', 200, 'ok', 7, 1, 'mock'), ('old-2', ${Date.now()}, '/v1/chat/completions', 'main', 200, 'ok', 9, 1, 'mock')`;
    const [gateway] = await gateways(1, url);
    await until(async () => /usage: database migrated to version 3/.test(gateway!.output()));
    expect(await sql`SELECT version FROM usage_migrations ORDER BY version`).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }]);
    expect(await sql`SELECT id, seq::int AS seq FROM usage ORDER BY seq`).toEqual([{ id: "old-1", seq: 1 }, { id: "old-2", seq: 2 }]);
    expect(await sql`SELECT indexdef FROM pg_indexes WHERE indexname = 'usage_seq'`).toEqual([{ indexdef: expect.stringContaining("UNIQUE INDEX usage_seq ON public.usage USING btree (seq)") }]);
    const watch = await watchEvents(gateway!.url, "?last=10");
    expect((await chat(gateway!.url, TEST_KEY, "hello there", { "x-request-id": "after-migration" })).status).toBe(200);
    expect(await watch.request("after-migration")).toMatchObject({ provider: "mock", status: 200 });
    expect(watch.events.map((e) => e.data.request_id)).toEqual(["after-migration"]);
    await watch.close();
    await until(async () => (await lastMinutes(gateway!.url, "mock")).requests === 3);
    await sql.close();
    expect(gateway!.output()).not.toMatch(/ERROR|could not be migrated/);
  }, 90_000);

  test("ten gateways starting at once on a new database migrate it once, without an error", async () => {
    const url = await pg.database("ten");
    const ten = await gateways(10, url);
    const sql = new SQL(url);
    await until(async () => (await sql`SELECT COUNT(*)::int AS n FROM pg_tables WHERE tablename = 'usage_migrations'`)[0].n === 1);
    await until(async () => ten.filter((g) => /usage: database migrated/.test(g.output())).length === 1);
    expect(await sql`SELECT version FROM usage_migrations ORDER BY version`).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }]);
    await sql.close();
    for (const g of ten) expect(g.output()).not.toMatch(/ERROR|could not be migrated/);
  }, 120_000);
});
