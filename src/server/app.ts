import type { Database } from "bun:sqlite";
import { Elysia, type AnyElysia } from "elysia";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { openDatabase } from "../lib/db.ts";
import type { AccessEntry } from "./access-log.ts";
import { createKeyring, type Guard } from "./auth.ts";
import { chatEdge } from "./chat-edge.ts";
import { BEDROCK_PATHS, bedrockEdge } from "./bedrock/edge.ts";
import { createControlPlane } from "./bedrock/control.ts";
import { cors, corsHeaders } from "./cors.ts";
import { createRateLimiter, type RateLimiter } from "./rate-limit.ts";
import { createRedisRateLimiter } from "./rate-limit-redis.ts";
import { connectRedis, type Redis } from "../lib/redis.ts";
import { bodyLimit, edge, REQUEST_ID } from "./edge.ts";
import { createCassettes } from "../cassettes/cassettes.ts";
import { createChat } from "../core/chat.ts";
import { createEmbeddings } from "../core/embeddings.ts";
import { lazyFiles } from "../files/index.ts";
import type { Files } from "../files/service.ts";
import { createDiscovery } from "../routing/discovery.ts";
import { createLive } from "../routing/live.ts";
import type { Declared } from "../routing/upstreams.ts";
import { createTokenCounter } from "../core/count-tokens.ts";
import { chatCompletions } from "./routes/chat.ts";
import { completions } from "./routes/completions.ts";
import { embeddings } from "./routes/embeddings.ts";
import { countTokensRoutes } from "./routes/count-tokens.ts";
import { docsRoutes } from "./routes/docs.ts";
import { filesRoutes } from "./routes/files.ts";
import { healthRoutes } from "./routes/health.ts";
import { messages } from "./routes/messages.ts";
import { metricsRoutes } from "./routes/metrics.ts";
import { modelRoutes } from "./routes/models.ts";
import { responses } from "./routes/responses.ts";
import { rootRoutes } from "./routes/root.ts";
import { usageRoutes } from "./routes/usage.ts";
import { createUsageService } from "../usage/service.ts";
import { COST_HEADER } from "./track-usage.ts";

export interface AppOptions {
  config: Config;
  log: Logger;
  /** Where request log entries go; none below LOG_LEVEL=info. */
  accessLog?: (entry: AccessEntry) => void;
}

const EXPOSED = [
  REQUEST_ID, "request-id", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after", COST_HEADER,
  "x-parley-model", "x-parley-upstream", "x-parley-route", "x-parley-attempts", "x-parley-dropped-tools", "x-parley-token-count",
];

/** Room for a multipart upload's framing and other fields around a file of MAX_UPLOAD_BYTES. */
const MULTIPART_SLACK = 1024 * 1024;

/**
 * parley's HTTP handler: the chat endpoints on their own edge (chat-edge.ts), everything else
 * (models, files, usage, health, docs, metrics) as Elysia routes. `close` stops what it started.
 */
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
  // Without --cassettes the upstreams are the configuration's own, and their providers call the global fetch.
  const cassettes = config.cassettes && createCassettes(config.cassettes, log);
  const declared = (d: Declared) => (cassettes ? cassettes.upstreams(d) : d);
  let upstreams: ReturnType<typeof createLive> | undefined;
  const discovery = createDiscovery({ config, database: db, log, upstreams: () => upstreams!.current().declared.upstreams });
  upstreams = createLive(declared(config.upstreams), { modelAliases: config.modelAliases, modelRoutes: config.modelRoutes, cooldownS: config.upstreamCooldownS }, discovery);
  void discovery.start();
  const chat = createChat({ config, log, upstreams, attachFiles });
  const maxBody = config.files.maxUploadBytes + MULTIPART_SLACK;
  const addCors = corsHeaders(config.corsOrigins, EXPOSED);
  const endpoints = [chatCompletions, messages, responses, completions, embeddings(createEmbeddings({ config, upstreams }))];
  const chats = chatEdge(endpoints, { chat, guard, log, debug: config.debug, maxBody, cors: addCors, accessLog });
  const bedrock = bedrockEdge({
    chat, guard, log, debug: config.debug, maxBody, cors: addCors, accessLog,
    credentials: config.ingressAwsCredentials, mainKey: config.apiKey, control: createControlPlane(upstreams, discovery),
  });
  const routes: { method: string; path: string }[] = [...chats.paths, ...BEDROCK_PATHS].map((path) => ({ method: "POST", path }));
  const app = new Elysia({ name: "parley" })
    .use(edge({
      debug: config.debug, log, accessLog,
      isKnownPath: (path) => knownPath(routes, path),
    }))
    .onRequest(bodyLimit(maxBody))
    .use(cors(addCors))
    .use(docsRoutes((): AnyElysia => app, endpoints))
    .use(healthRoutes(upstreams, redis?.status))
    .use(modelRoutes(upstreams, guard, discovery))
    .use(countTokensRoutes(guard, createTokenCounter(config, upstreams)))
    .use(rootRoutes())
    .use(filesRoutes(config, files, guard))
    .use(usageRoutes(usage, guard))
    .use(usage.metrics ? metricsRoutes(usage.metrics, guard, usage.settle) : new Elysia({ name: "parley/metrics-off" }));
  routes.push(...app.routes.filter((route) => route.method !== "OPTIONS"));
  let elysia: ((request: Request) => Response | Promise<Response>) | undefined;
  const handle = (request: Request): Promise<Response> => chats.handle(request) ?? bedrock.handle(request) ?? Promise.resolve((elysia ??= app.fetch)(request));
  return {
    /** Every route but OPTIONS, for 405s and tests. */
    routes,
    /** The upstreams in force. */
    upstreams,
    /** Puts a reloaded configuration's upstreams and routes in force (requests in flight finish as they began); says what changed. */
    reload(next: Config): string {
      const changed = upstreams!.replace(declared(next.upstreams), next.modelRoutes);
      if (config.modelsRefreshS > 0) void discovery.refresh();
      return changed;
    },
    handle: cassettes ? (request: Request) => cassettes.within(request, handle) : handle,
    async close() {
      discovery.stop();
      await cassettes?.flush();
      await usage.close();
      redis?.close();
      if (db.opened()) db().close();
    },
  };
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
