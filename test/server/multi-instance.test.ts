import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { TEST_KEY } from "../lib/app.ts";
import { startCli, userDir } from "../lib/cli.ts";
import { form, startS3 } from "../lib/files.ts";
import { startRedis, withinOneWindow } from "../lib/redis.ts";

// Several gateways as a team runs them: separate processes with their own data directories,
// sharing one Redis for rate limits and one bucket (s3rver) for files.
const redis = await startRedis();
const s3 = await startS3();
afterAll(async () => {
  await redis.kill();
  await s3.stop();
});

const SECOND_KEY = "sk-second-key-0000000001";
const running: Awaited<ReturnType<typeof startCli>>[] = [];

async function gateways(n: number, env: Record<string, string> = {}) {
  const started = await Promise.all(Array.from({ length: n }, () => {
    const user = userDir();
    return startCli([], {
      cwd: user.dir,
      env: { ...user.env, API_KEY: TEST_KEY, API_KEYS: `${SECOND_KEY}:models`, REDIS_URL: redis.url, ...s3.env, ...env },
    });
  }));
  running.push(...started);
  return started;
}

beforeEach(async () => {
  await Promise.all(running.splice(0).map((gateway) => gateway.stop()));
  if (!(await redis.client().then(() => true, () => false))) await redis.start();
  const inspect = await redis.client();
  await inspect.send("FLUSHALL", []);
  inspect.close();
});
afterAll(() => Promise.all(running.map((gateway) => gateway.stop())));

/** `total` requests spread evenly over the gateways, `concurrency` at a time; the statuses seen. */
async function hammer(urls: string[], total: number, { concurrency = 16, key = TEST_KEY } = {}) {
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const url = urls[next++ % urls.length]!;
      const response = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      await response.arrayBuffer();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    }
  }));
  return Object.fromEntries(statuses);
}

async function redisHealth(url: string): Promise<string> {
  return (await (await fetch(`${url}/health`)).json()).redis;
}

async function until(condition: () => Promise<boolean>, ms = 10_000) {
  for (const deadline = Date.now() + ms; !(await condition()); await Bun.sleep(100)) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${condition}`);
  }
}

describe("rate limits across gateway processes", () => {
  test("two gateways hammered concurrently let exactly RATE_LIMIT_RPM through between them", async () => {
    // The window is checked once the gateways are up: starting them takes long on a busy machine.
    const [a, b] = await gateways(2, { RATE_LIMIT_RPM: "50" });
    await withinOneWindow(10);
    expect(await hammer([a!.url, b!.url], 400, { concurrency: 32 })).toEqual({ 200: 50, 429: 350 });
    expect(await redisHealth(a!.url)).toBe("ok");
  }, 60_000);

  test("open: with Redis killed requests get through, one warning per gateway; after a restart the limit applies again", async () => {
    const [a, b] = await gateways(2, { RATE_LIMIT_RPM: "50", RATE_LIMIT_ON_REDIS_ERROR: "open" });
    const urls = [a!.url, b!.url];
    await withinOneWindow(10);
    expect(await hammer(urls, 60)).toEqual({ 200: 50, 429: 10 });

    await redis.kill();
    expect(await hammer(urls, 80, { key: SECOND_KEY })).toEqual({ 200: 80 });
    const during = await fetch(`${a!.url}/v1/models`, { headers: { authorization: `Bearer ${SECOND_KEY}` } });
    expect(during.headers.get("x-ratelimit-limit")).toBe("50");
    expect(during.headers.get("x-ratelimit-remaining")).toBeNull();
    expect(await redisHealth(a!.url)).toBe("unreachable");
    expect(await redisHealth(b!.url)).toBe("unreachable");

    await redis.start();
    await until(async () => (await redisHealth(a!.url)) === "ok" && (await redisHealth(b!.url)) === "ok");
    // The restarted Redis is empty: the second key starts from zero, and is held to the limit again.
    await withinOneWindow(10);
    expect(await hammer(urls, 60, { key: SECOND_KEY })).toEqual({ 200: 50, 429: 10 });

    for (const gateway of [a!, b!]) {
      const output = await gateway.stop();
      expect(output.match(/Redis at 127\.0\.0\.1:\d+ is unreachable .*rate limits are not enforced until it is back/g)).toHaveLength(1);
      expect(output.match(/Redis at 127\.0\.0\.1:\d+ is reachable again/g)).toHaveLength(1);
      expect(output).not.toContain(redis.url.replace("redis://", "//:"));
    }
  }, 60_000);

  test("closed: with Redis killed requests are refused with 503; after a restart they pass within the limit", async () => {
    const [a, b] = await gateways(2, { RATE_LIMIT_RPM: "50", RATE_LIMIT_ON_REDIS_ERROR: "closed" });
    const urls = [a!.url, b!.url];
    expect(await hammer(urls, 20)).toEqual({ 200: 20 });

    await redis.kill();
    expect(await hammer(urls, 40, { key: SECOND_KEY })).toEqual({ 503: 40 });
    const refused = await fetch(`${b!.url}/v1/models`, { headers: { authorization: `Bearer ${SECOND_KEY}` } });
    expect(refused.headers.get("retry-after")).toBe("1");
    expect((await refused.json()).error).toMatchObject({ type: "service_unavailable_error", message: expect.stringContaining("Rate limits cannot be checked") });

    await redis.start();
    await until(async () => (await redisHealth(a!.url)) === "ok" && (await redisHealth(b!.url)) === "ok");
    await withinOneWindow(10);
    expect(await hammer(urls, 60, { key: SECOND_KEY })).toEqual({ 200: 50, 429: 10 });
    for (const gateway of [a!, b!]) {
      expect((await gateway.stop()).match(/is unreachable .*requests are refused \(503\) until it is back/g)).toHaveLength(1);
    }
  }, 60_000);
});

describe("files across gateway processes sharing one bucket", () => {
  const headers = { authorization: `Bearer ${TEST_KEY}` };
  const upload = async (url: string, name: string, content: string) => {
    const response = await fetch(`${url}/v1/files`, { method: "POST", headers, body: form({ name, content, type: "text/plain" }, "assistants") });
    expect(response.status).toBe(200);
    return (await response.json()).id as string;
  };
  const listed = async (url: string, id: string) =>
    ((await (await fetch(`${url}/v1/files?limit=100`, { headers })).json()).data as { id: string }[]).some((file) => file.id === id);

  test("an upload on one is read, listed and deletable on the other; a delete on one is a 404 on the other", async () => {
    const [a, b] = await gateways(2);
    const id = await upload(a!.url, "shared.txt", "written on gateway a");

    const retrieved = await fetch(`${b!.url}/v1/files/${id}`, { headers });
    expect(retrieved.status).toBe(200);
    expect(await retrieved.json()).toMatchObject({ id, filename: "shared.txt", bytes: 20, purpose: "assistants" });
    const content = await fetch(`${b!.url}/v1/files/${id}/content`, { headers });
    expect(content.status).toBe(200);
    expect(await content.text()).toBe("written on gateway a");
    // Listing may lag behind the bucket for a few seconds; retrieval by id may not.
    await until(() => listed(b!.url, id));

    const removed = await fetch(`${b!.url}/v1/files/${id}`, { method: "DELETE", headers });
    expect(await removed.json()).toEqual({ id, object: "file", deleted: true });
    // The bytes are gone at once; metadata agrees within the store sync window (a few seconds).
    expect((await fetch(`${a!.url}/v1/files/${id}/content`, { headers })).status).toBe(404);
    await until(async () => (await fetch(`${a!.url}/v1/files/${id}`, { headers })).status === 404);
    expect((await fetch(`${a!.url}/v1/files/${id}`, { method: "DELETE", headers })).status).toBe(404);

    const other = await upload(b!.url, "second.txt", "written on gateway b");
    expect((await fetch(`${a!.url}/v1/files/${other}`, { method: "DELETE", headers })).status).toBe(200);
    await until(async () => (await fetch(`${b!.url}/v1/files/${other}`, { headers })).status === 404);
    await until(async () => !(await listed(a!.url, id)) && !(await listed(b!.url, other)));
  }, 60_000);
});
