import { RedisClient } from "bun";
import type { Logger } from "../log.ts";

/** A command Redis has not answered in this long counts as Redis being away. */
const COMMAND_TIMEOUT_MS = 1000;
/** While Redis is away, a new connection is tried at most this often, when something needs Redis. */
const RETRY_EVERY_MS = 1000;
/** A try that took this long hung rather than being refused. */
const HUNG_MS = COMMAND_TIMEOUT_MS / 2;

export type RedisStatus = "ok" | "unreachable";

export class RedisUnreachable extends Error {}
class CommandTimeout extends RedisUnreachable {}

/**
 * One Redis connection per process, managed here rather than by Bun's client: commands never queue
 * while Redis is away, and an outage is logged once when it starts and once when it ends, whatever
 * the traffic. A Redis that refuses connections is asked again by the next request that needs it
 * (a refusal costs nothing, and the first request after Redis is back gets through); one that let a
 * connection or a command hang is retried in the background, at most once a second while something
 * needs Redis (requests, /health), and no request waits for it meanwhile.
 */
export function connectRedis(url: string, log: Logger, whileAway: string) {
  const where = address(url);
  const client = new RedisClient(url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: COMMAND_TIMEOUT_MS });
  let status: RedisStatus = "ok";
  let connecting: Promise<unknown> | undefined;
  let lastTry = 0;
  /** The last try hung until its timeout: trying again costs a request up to a second. */
  let hung = false;

  async function connected(): Promise<void> {
    if (client.connected) return;
    if (status === "unreachable" && hung) {
      if (!connecting && Date.now() - lastTry >= RETRY_EVERY_MS) connect().catch(() => {});
      throw new RedisUnreachable("reconnecting");
    }
    await (connecting ?? connect());
  }

  function connect(): Promise<unknown> {
    const started = (lastTry = Date.now());
    const attempt = client.connect().then(
      () => (hung = false),
      (error) => {
        hung = Date.now() - started >= HUNG_MS;
        throw error;
      },
    );
    return (connecting = attempt.finally(() => (connecting = undefined)));
  }

  /**
   * Sends one command. Redis being away, too slow or refusing (a read-only replica, a wrong password)
   * is a RedisUnreachable; only NOSCRIPT, which `run` answers itself, passes through as it is.
   */
  async function send(command: string, args: string[]): Promise<unknown> {
    try {
      await connected();
      const reply = await withTimeout(client.send(command, args), () => client.close());
      if (status === "unreachable") log.info(`Redis at ${where} is reachable again`);
      status = "ok";
      return reply;
    } catch (error) {
      if (isNoScript(error)) throw error;
      if (error instanceof CommandTimeout) hung = true;
      if (status === "ok") log.warn(`Redis at ${where} is unreachable (${(error as Error).message}): ${whileAway} until it is back`);
      status = "unreachable";
      throw error instanceof RedisUnreachable ? error : new RedisUnreachable((error as Error).message);
    }
  }

  return {
    send,
    /** Runs a Lua script by its hash, loading it once per Redis lifetime (a restarted Redis has forgotten it). */
    async run(script: Script, keys: string[], args: string[]): Promise<unknown> {
      const tail = [String(keys.length), ...keys, ...args];
      try {
        return await send("EVALSHA", [script.sha, ...tail]);
      } catch (error) {
        if (!isNoScript(error)) throw error;
        return send("EVAL", [script.source, ...tail]);
      }
    },
    /** A real round trip, so /health tells the truth and an idle gateway notices Redis is back. */
    async status(): Promise<RedisStatus> {
      return send("PING", []).then(() => "ok" as const, () => "unreachable" as const);
    },
    close: () => client.close(),
  };
}

export type Redis = ReturnType<typeof connectRedis>;

export interface Script {
  source: string;
  sha: string;
}

export function script(source: string): Script {
  return { source, sha: new Bun.CryptoHasher("sha1").update(source).digest("hex") };
}

/** What a shared count does when Redis cannot be asked: "open" lets the request through, "closed" refuses it (503). */
export type OnRedisError = "open" | "closed";

/**
 * Adds ARGV[1] to the counter KEYS[1], created with a lifetime of ARGV[2] seconds, and returns the
 * new count, in one atomic step. Nothing in it is about requests: rate limits count requests per
 * minute with it, daily budgets spending per day.
 */
export const ADD_WITH_EXPIRY = script(`redis.call('SET', KEYS[1], 0, 'EX', ARGV[2], 'NX')
return redis.call('INCRBY', KEYS[1], ARGV[1])`);

const isNoScript = (error: unknown) => String((error as Error).message).startsWith("NOSCRIPT");

/** host:port only: a Redis URL may carry a password. */
function address(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || "6379"}`;
}

function withTimeout<T>(promise: Promise<T>, onTimeout: () => void): Promise<T> {
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // A connection that stopped answering is dropped, so the next command starts a fresh one.
      onTimeout();
      reject(new CommandTimeout(`no answer within ${COMMAND_TIMEOUT_MS} ms`));
    }, COMMAND_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
