import { RedisClient, type Subprocess } from "bun";
import { freePort } from "./proc.ts";

export { freePort } from "./proc.ts";

/**
 * A real redis-server (the Debian package) on a free port, in memory only. `kill` and `start` again
 * make an outage; a restarted server is empty, as after a real crash without persistence.
 */
export async function startRedis() {
  if (!Bun.which("redis-server")) throw new Error("redis-server is not installed (apt-get install redis-server); the Redis tests need it");
  const port = freePort();
  const url = `redis://127.0.0.1:${port}`;
  let proc: Subprocess | undefined;

  async function start() {
    proc = Bun.spawn(["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdout: "ignore",
      stderr: "inherit",
    });
    const client = new RedisClient(url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: 500 });
    try {
      for (const deadline = Date.now() + 10_000; ; await Bun.sleep(20)) {
        if (proc.exitCode !== null) throw new Error(`redis-server exited ${proc.exitCode} on port ${port}`);
        if (await client.connect().then(() => true, () => false)) return;
        if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}`);
      }
    } finally {
      client.close();
    }
  }

  async function kill() {
    proc?.kill("SIGKILL");
    await proc?.exited;
  }

  /** A fresh client for looking inside (INFO, GET); the caller closes it. */
  async function client() {
    const redis = new RedisClient(url, { autoReconnect: false });
    await redis.connect();
    return redis;
  }

  await start();
  return { url, port, start, kill, client, pid: () => proc!.pid, stop: kill, [Symbol.asyncDispose]: kill };
}

export type TestRedis = Awaited<ReturnType<typeof startRedis>>;

/** Waits until at least `seconds` are left in the current minute, so a test never spans two rate-limit windows. */
export async function withinOneWindow(seconds: number): Promise<void> {
  const left = 60 - (Date.now() / 1000) % 60;
  if (left < seconds) await Bun.sleep(left * 1000 + 200);
}
