import type { Database } from "bun:sqlite";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import type { Redis } from "../lib/redis.ts";
import { createBudgets, RedisBudgetStore, sqliteBudgetStore, type Budgets } from "./budgets.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import { loadPrices, type PriceOf } from "./prices.ts";
import { createRecorder, type Recorder } from "./recorder.ts";

export interface UsageService {
  prices: PriceOf;
  /** Absent with USAGE=off. */
  recorder?: Recorder;
  /** Absent with METRICS=off. */
  metrics?: Metrics;
  /** Absent when no key has a budget. */
  budgets?: Budgets;
  database: () => Database;
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
  const recorder = config.usage ? createRecorder(database, config.usageRetentionDays, log) : undefined;
  const budgets = hasBudgets
    ? createBudgets(redis ? new RedisBudgetStore(redis) : sqliteBudgetStore(database), config.rateLimitOnRedisError)
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
    ...(config.metrics ? { metrics: createMetrics() } : {}),
    ...(budgets ? { budgets } : {}),
    database,
    later(task) {
      if (tasks.length === 0) queueMicrotask(runTasks);
      tasks.push(task);
    },
    settle: runTasks,
    async close() {
      runTasks();
      recorder?.flush();
      await budgets?.flush().catch((error) => log.warn("budget counts not saved:", error));
    },
  };
}
