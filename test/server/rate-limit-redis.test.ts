import { afterAll, describe, expect, test } from "bun:test";
import { createConsola } from "consola";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { createRedisRateLimiter } from "../../src/server/rate-limit-redis.ts";
import { connectRedis } from "../../src/lib/redis.ts";
import { testApp } from "../lib/app.ts";
import { startRedis, withinOneWindow } from "../lib/redis.ts";

const redis = await startRedis();
afterAll(() => redis.kill());

/** A logger whose lines the test can read. */
function capture() {
  const lines: string[] = [];
  const log = createConsola({ level: 5, reporters: [{ log: (entry) => lines.push(`${entry.type}: ${entry.args.join(" ")}`) }] });
  return { log, lines };
}

let keys = 0;
const freshKey = () => `test-${process.pid}-${++keys}`;

describe("rate limits on Redis", () => {
  test("two gateways' limiters, asked concurrently, let exactly the limit through together", async () => {
    await withinOneWindow(10);
    const [a, b] = [connectRedis(redis.url, capture().log, "-"), connectRedis(redis.url, capture().log, "-")];
    const limits = [createRedisRateLimiter(a, 200, "closed"), createRedisRateLimiter(b, 200, "closed")];
    const key = freshKey();
    // Uneven, concurrent traffic: the first takes two of every three requests.
    const decisions = await Promise.all(Array.from({ length: 600 }, (_, i) => limits[i % 3 === 2 ? 1 : 0]!(key)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(200);
    expect(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0)).toBe(true);
    a.close();
    b.close();
  });

  test("a busy key costs a round trip per lease, not per request, and counts down exactly", async () => {
    await withinOneWindow(10);
    const connection = connectRedis(redis.url, capture().log, "-");
    const limit = createRedisRateLimiter(connection, 100_000, "closed");
    const inspect = await redis.client();
    const scripts = async () => {
      const stats = String(await inspect.send("INFO", ["commandstats"]));
      const calls = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      return calls("evalsha") + calls("eval");
    };
    const key = freshKey();
    const before = await scripts();
    const remaining: number[] = [];
    for (let i = 0; i < 500; i++) remaining.push((await limit(key)).remaining!);
    const concurrent = await Promise.all(Array.from({ length: 500 }, () => limit(key)));
    const trips = (await scripts()) - before;
    expect(remaining).toEqual(Array.from({ length: 500 }, (_, i) => 99_999 - i));
    expect(concurrent.every((d) => d.allowed)).toBe(true);
    expect(trips).toBeLessThan(50);
    // Redis holds what was claimed: the requests used plus this process's unused lease, no more.
    const counted = Number(await inspect.get(`parley:rate:${key}:${Math.floor(Date.now() / 60_000)}`));
    expect(counted).toBeGreaterThanOrEqual(1000);
    expect(counted).toBeLessThanOrEqual(1000 + 256);
    expect(Number(await inspect.ttl(`parley:rate:${key}:${Math.floor(Date.now() / 60_000)}`))).toBeGreaterThan(60);
    inspect.close();
    connection.close();
  });

  test("a Redis that stops answering costs a request at most a second, then the policy decides", async () => {
    const { log, lines } = capture();
    const connection = connectRedis(redis.url, log, "rate limits are not enforced");
    const limit = createRedisRateLimiter(connection, 10, "open");
    expect((await limit(freshKey())).remaining).toBe(9);
    process.kill(redis.pid(), "SIGSTOP");
    try {
      const decision = await limit(freshKey());
      expect(decision).toMatchObject({ allowed: true, limit: 10 });
      expect(decision.remaining).toBeUndefined();
      expect(await connection.status()).toBe("unreachable");
    } finally {
      process.kill(redis.pid(), "SIGCONT");
    }
    for (const deadline = Date.now() + 5000; (await connection.status()) !== "ok" && Date.now() < deadline; ) await Bun.sleep(100);
    expect(await connection.status()).toBe("ok");
    expect((await limit(freshKey())).remaining).toBe(9);
    expect(lines.filter((l) => l.startsWith("warn:"))).toEqual([
      expect.stringMatching(/^warn: Redis at 127\.0\.0\.1:\d+ is unreachable \(.+\): rate limits are not enforced until it is back$/),
    ]);
    expect(lines.filter((l) => /reachable again/.test(l))).toHaveLength(1);
    connection.close();
  });

  test("closed: a request Redis cannot count is a 503 with Retry-After, not a 429", async () => {
    const unreachable = `redis://127.0.0.1:${redis.port + 1}`;
    const { call } = testApp({ REDIS_URL: unreachable, RATE_LIMIT_ON_REDIS_ERROR: "closed", RATE_LIMIT_RPM: "5" });
    const response = await call("/v1/models");
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    const body = await response.json();
    expect(body.error.type).toBe("service_unavailable_error");
    expect(body.error.message).toContain("Rate limits cannot be checked");
    const health = await (await call("/health", { key: null })).json();
    expect(health.redis).toBe("unreachable");
  });

  test("closed: the first request after Redis comes back is let through", async () => {
    await using own = await startRedis();
    await own.kill();
    const { call } = testApp({ REDIS_URL: own.url, RATE_LIMIT_ON_REDIS_ERROR: "closed", RATE_LIMIT_RPM: "100" });
    expect((await call("/v1/models")).status).toBe(503);
    expect((await call("/v1/models")).status).toBe(503);
    await own.start();
    expect((await call("/v1/models")).status).toBe(200);
  });

  test("the app counts on Redis when REDIS_URL is set, and /health says redis is ok", async () => {
    await withinOneWindow(5);
    const first = testApp({ REDIS_URL: redis.url, RATE_LIMIT_RPM: "3" });
    const second = testApp({ REDIS_URL: redis.url, RATE_LIMIT_RPM: "3" });
    const statuses = [];
    for (const { call } of [first, second, first, second]) statuses.push((await call("/v1/models")).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await (await first.call("/health", { key: null })).json()).redis).toBe("ok");
    expect((await (await testApp().call("/health", { key: null })).json()).redis).toBeUndefined();
  });

  test("REDIS_URL and RATE_LIMIT_ON_REDIS_ERROR are checked at startup", () => {
    const load = (env: Record<string, string>) => loadConfig({ env: { HOME: "/nonexistent", ...env }, cwd: "/nonexistent" });
    expect(() => load({ REDIS_URL: "localhost:6379" })).toThrow(ConfigError);
    expect(() => load({ REDIS_URL: "redis://:secret-password-123456@localhost:6379", RATE_LIMIT_ON_REDIS_ERROR: "maybe" })).toThrow(/one of open, closed/);
    expect(load({ REDIS_URL: "rediss://cache.internal:6380/2" }).config).toMatchObject({ redisUrl: "rediss://cache.internal:6380/2", rateLimitOnRedisError: "open" });
    expect(() => load({ REDIS_URL: "http://:secret-password-123456@x" })).toThrow(/^REDIS_URL=\*{4}\S{0,4} \(from env\) is invalid: expected a redis:\/\/ or rediss:\/\/ URL$/);
  });
});
