import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import type { Redis } from "../lib/redis.ts";
import { createBudgets, PostgresBudgetStore, RedisBudgetStore, sqliteBudgetStore, type Budgets } from "./budgets.ts";
import { createPostgresCounters, type PostgresCounters } from "./postgres-counters.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import { loadPrices, type PriceOf } from "./prices.ts";
import { connectPostgres } from "../lib/postgres.ts";
import { createPostgresUsageStore } from "./postgres-store.ts";
import { createRecorder, type Recorder } from "./recorder.ts";
import { createSqliteUsageStore } from "./sqlite-store.ts";
import type { UsageStore } from "./store.ts";

export interface UsageService {
  prices: PriceOf;
  /** Absent with USAGE=off. */
  recorder?: Recorder;
  /** Absent with METRICS=off. */
  metrics?: Metrics;
  /** Absent when no key has a budget. */
  budgets?: Budgets;
  database: () => Database;
  /** Where records and rollups live: Postgres with DATABASE_URL, else SQLite. */
  store: UsageStore;
  /** Shared counters in Postgres: with DATABASE_URL, for rate limits and budgets when there is no Redis. */
  counters?: PostgresCounters;
  /**
   * Runs `task` once the answer in hand is Bun's to write, with the tasks of every request answered
   * meanwhile: a microtask, about a µs of counting before Bun writes the answer. A timer instead
   * kept that µs off the answer but woke the event loop once more for it, which at concurrency 1
   * cost 21-26 µs of CPU a request (`ab.ts --connections 1`) and bought no latency that showed.
   */
  later(task: () => void): void;
  /** Runs what `later` holds now: before a read of the records or metrics, and at the end. */
  settle(): void;
  /** Writes what is queued: when the app stops. */
  close(): Promise<void>;
}

/** Records, prices, budgets and metrics: what the chat routes feed and /v1/usage, /metrics and auth read. */
export function createUsageService(config: Config, database: () => Database, redis: Redis | undefined, log: Logger): UsageService {
  const hasBudgets = config.apiKeys.some((entry) => entry.budget);
  const sql = config.databaseUrl ? connectPostgres(config.databaseUrl) : undefined;
  const store = openUsageStore(config, database, log, sql);
  const counters = sql && createPostgresCounters(sql);
  const metrics = config.metrics ? createMetrics() : undefined;
  const recorder = config.usage
    ? createRecorder(store, { retentionDays: config.usageRetentionDays, bufferMax: config.usageBufferMax, log, dropped: metrics && ((n) => metrics.usageDropped.inc([], n)) })
    : undefined;
  const budgets = hasBudgets
    ? createBudgets(redis ? new RedisBudgetStore(redis) : counters ? new PostgresBudgetStore(counters) : sqliteBudgetStore(database), config.rateLimitOnRedisError)
    : undefined;
  let tasks: (() => void)[] = [];
  const runTasks = () => {
    const due = tasks;
    tasks = [];
    for (const task of due) task();
  };
  return {
    prices: loadPrices(config.configDir),
    ...(recorder ? { recorder } : {}),
    ...(metrics ? { metrics } : {}),
    ...(budgets ? { budgets } : {}),
    database,
    store,
    ...(counters ? { counters } : {}),
    later(task) {
      if (tasks.length === 0) queueMicrotask(runTasks);
      tasks.push(task);
    },
    settle: runTasks,
    async close() {
      runTasks();
      await recorder?.flush();
      if (recorder?.queued) log.error(`usage: ${recorder.queued} records are lost: the database is unreachable as parley stops`);
      await store.close().catch(() => {});
      await budgets?.flush().catch((error) => log.warn("budget counts not saved:", error));
    },
  };
}

/** Postgres when DATABASE_URL names one (its schema migrated at start), else parley.db. */
export function openUsageStore(config: Pick<Config, "databaseUrl">, database: () => Database, log: Logger, sql?: SQL): UsageStore {
  if (!config.databaseUrl) return createSqliteUsageStore(database);
  const store = createPostgresUsageStore(sql ?? connectPostgres(config.databaseUrl), log);
  store.ready().catch((error) => log.error("usage: the database could not be migrated (retried at the next write):", error));
  return store;
}
