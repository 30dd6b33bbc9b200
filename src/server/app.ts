import type { Database } from "bun:sqlite";
import { Elysia, type AnyElysia } from "elysia";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { openDatabase } from "../db.ts";
import type { AccessEntry } from "./access-log.ts";
import { createKeyring, type Guard } from "./auth.ts";
import { cors } from "./cors.ts";
import { createRateLimiter, type RateLimiter } from "./rate-limit.ts";
import { createRedisRateLimiter } from "./rate-limit-redis.ts";
import { connectRedis, type Redis } from "./redis.ts";
import { edge, REQUEST_ID } from "./edge.ts";
import { createChat } from "../chat.ts";
import { lazyFiles } from "../files/index.ts";
import type { Files } from "../files/service.ts";
import { createDiscovery } from "../providers/discovery.ts";
import { createProviders, modelListers } from "../providers/registry.ts";
import { createRouter } from "../providers/routes.ts";
import { createTokenCounter } from "../providers/tokens.ts";
import { chatRoutes } from "./routes/chat.ts";
import { docsRoutes } from "./routes/docs.ts";
import { filesRoutes } from "./routes/files.ts";
import { healthRoutes } from "./routes/health.ts";
import { messagesRoutes } from "./routes/messages.ts";
import { metricsRoutes } from "./routes/metrics.ts";
import { modelRoutes } from "./routes/models.ts";
import { responsesRoutes } from "./routes/responses.ts";
import { rootRoutes } from "./routes/root.ts";
import { usageRoutes } from "./routes/usage.ts";
import { createUsageService } from "../usage/service.ts";
import { COST_HEADER } from "../usage/track.ts";

export interface AppOptions {
  config: Config;
  log: Logger;
  /** Where request log entries go; none below LOG_LEVEL=info. */
  accessLog?: (entry: AccessEntry) => void;
}

const EXPOSED = [
  REQUEST_ID, "request-id", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after", COST_HEADER,
  "x-parley-model", "x-parley-attempts", "x-parley-dropped-tools", "x-parley-token-count",
];

export function createApp({ config, log, accessLog }: AppOptions) {
  const db = lazy(() => openDatabase(config.dataDir));
  const redis = config.redisUrl
    ? connectRedis(config.redisUrl, log, config.rateLimitOnRedisError === "open" ? `rate limits${config.apiKeys.some((k) => k.budget) ? " and budgets" : ""} are not enforced` : "requests are refused (503)")
    : undefined;
  const usage = createUsageService(config, db, redis, log);
  const guard: Guard = {
    identify: createKeyring(config),
    ...(config.rateLimitRpm > 0 ? { limit: createLimiter(config, db, redis) } : {}),
    usage,
  };
  const files = lazyFiles(config, log, db);
  const attachFiles = async (request: Parameters<Files["attachTo"]>[0]) => (await files.files()).attachTo(request);
  const discovery = createDiscovery({ config, database: db, log, listers: modelListers(config) });
  void discovery.start();
  const providers = createProviders(config);
  const router = createRouter(config, discovery);
  const chat = createChat({ config, log, providers, router, attachFiles });
  const routes: { method: string; path: string }[] = [];
  const app = new Elysia({ name: "parley" })
    .use(edge({
      debug: config.debug, log, accessLog,
      isKnownPath: (path) => knownPath(routes, path),
    }))
    .use(cors(config.corsOrigins, EXPOSED))
    .use(docsRoutes((): AnyElysia => app))
    .use(healthRoutes(config, redis?.status))
    .use(modelRoutes(config, guard, discovery, router))
    .use(chatRoutes(chat, guard))
    .use(responsesRoutes(chat, guard))
    .use(messagesRoutes(chat, guard, createTokenCounter(config, providers, router)))
    .use(rootRoutes())
    .use(filesRoutes(config, files, guard))
    .use(usageRoutes(usage, guard))
    .use(usage.metrics ? metricsRoutes(usage.metrics, guard) : new Elysia({ name: "parley/metrics-off" }));
  app.onStop(async () => {
    discovery.stop();
    await usage.close();
    redis?.close();
    if (db.opened()) db().close();
  });
  routes.push(...app.routes.filter((route) => route.method !== "OPTIONS"));
  return app;
}

export type App = ReturnType<typeof createApp>;

/** Redis when REDIS_URL is set (one limit across gateways), else SQLite (one limit across workers). */
function createLimiter(config: Config, db: () => Database, redis: Redis | undefined): RateLimiter {
  if (redis) return createRedisRateLimiter(redis, config.rateLimitRpm, config.rateLimitOnRedisError);
  return createRateLimiter(db, config.rateLimitRpm);
}

/** True when some route has this path under another method: the caller answers 405. */
function knownPath(routes: { method: string; path: string }[], path: string): boolean {
  return routes.some((route) => {
    const pattern = route.path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/:[^/]+/g, "[^/]+").replace(/\*/g, ".*");
    return new RegExp(`^${pattern}$`).test(path);
  });
}

function lazy<T>(make: () => T) {
  let made: { value: T } | undefined;
  return Object.assign(() => (made ??= { value: make() }).value, { opened: () => made !== undefined });
}
