import type { Database } from "bun:sqlite";
import type { Config, Entry } from "../config.ts";
import type { Logger } from "../log.ts";
import { TELEMETRY_OFF, type Telemetry } from "../telemetry/index.ts";
import { openDatabase } from "../lib/db.ts";
import type { AccessEntry } from "./access-log.ts";
import type { Guard } from "./auth.ts";
import { createControlPlane } from "./bedrock/control.ts";
import { corsHeaders } from "./edge/cors.ts";
import type { Endpoint } from "./edge/endpoint.ts";
import { createPipeline, REQUEST_ID } from "./edge/pipeline.ts";
import { COST_HEADER } from "./edge/track-usage.ts";
import { createKeys } from "./keys.ts";
import { createRateLimiter, type RateLimiter } from "./rate-limit.ts";
import { createRedisRateLimiter, createSharedRateLimiter } from "./rate-limit-redis.ts";
import { connectRedis, type Redis } from "../lib/redis.ts";
import { createCassettes } from "../cassettes/cassettes.ts";
import { createChat } from "../core/chat.ts";
import { createEmbeddings } from "../core/embeddings.ts";
import { createTokenCounter } from "../core/count-tokens.ts";
import { lazyFiles } from "../files/index.ts";
import type { Files } from "../files/service.ts";
import { createDiscovery } from "../routing/discovery.ts";
import { createLive } from "../routing/live.ts";
import { capUpstreams } from "../providers/capped-fetch.ts";
import type { Declared } from "../routing/upstreams.ts";
import type { PostgresCounters } from "../usage/postgres-counters.ts";
import { createUsageService } from "../usage/service.ts";
import { bedrock } from "./endpoints/bedrock.ts";
import { chatCompletions } from "./endpoints/chat.ts";
import { completions } from "./endpoints/completions.ts";
import { countTokens } from "./endpoints/count-tokens.ts";
import { docs } from "./endpoints/docs.ts";
import { embeddings } from "./endpoints/embeddings.ts";
import { files as fileEndpoints } from "./endpoints/files.ts";
import { gemini } from "./endpoints/gemini.ts";
import { health } from "./endpoints/health.ts";
import { ui } from "./endpoints/ui.ts";
import { messages } from "./endpoints/messages.ts";
import { metrics } from "./endpoints/metrics.ts";
import { onFirstDrop } from "../providers/dropped-betas.ts";
import { sealKeyIn } from "../lib/seal.ts";
import { modelEndpoints } from "./endpoints/models.ts";
import { responses, responsesCompact, responsesWebSocket } from "./endpoints/responses.ts";
import { root } from "./endpoints/root.ts";
import { adminEndpoints } from "./endpoints/admin.ts";
import { usage as usageEndpoint } from "./endpoints/usage.ts";
import { vertex } from "./endpoints/vertex.ts";

export interface AppOptions {
  config: Config;
  log: Logger;
  /** Where request log entries go; none below LOG_LEVEL=info. */
  accessLog?: (entry: AccessEntry) => void;
  /** OpenTelemetry (contract 24), made at start-up from the OTEL_* variables; flushed by `close`. */
  telemetry?: Telemetry;
  /** The settings as read, with their sources, for GET /admin/v1/config (a server reads them again: `onReload`). */
  entries?: Entry[];
}

const EXPOSED = [
  REQUEST_ID, "request-id", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after", COST_HEADER,
  "x-parley-model", "x-parley-upstream", "x-parley-route", "x-parley-session-target", "x-parley-attempts", "x-parley-dropped-tools", "x-parley-token-count",
];

/** Room for a multipart upload's framing and other fields around a file of MAX_UPLOAD_BYTES. */
const MULTIPART_SLACK = 1024 * 1024;

/**
 * parley's HTTP handler: every endpoint declared (endpoints/), all served by one pipeline
 * (edge/pipeline.ts). `close` stops what it started.
 */
export function createApp({ config, log, accessLog, entries, telemetry = TELEMETRY_OFF }: AppOptions) {
  const db = lazy(() => openDatabase(config.dataDir));
  const redis = config.redisUrl
    ? connectRedis(config.redisUrl, log, config.rateLimitOnRedisError === "open" ? `rate limits${config.apiKeys.some((k) => k.budget) ? " and budgets" : ""} are not enforced` : "requests are refused (503)")
    : undefined;
  const usage = createUsageService(config, db, redis, log);
  const keys = createKeys(config, db, log, usage.prices);
  const guard: Guard = {
    identify: keys.lookup.identify,
    envBudgets: keys.envBudgets,
    ...(config.rateLimitRpm > 0 ? { limit: createLimiter(config, db, redis, usage.counters) } : {}),
    rpm: keys.rpm,
    tpm: keys.tpm,
    usage,
    access: keys.access,
  };
  const files = lazyFiles(config, log, db);
  const attachFiles = async (request: Parameters<Files["attachTo"]>[0]) => (await files.files()).attachTo(request);
  // Without --cassettes the upstreams are the configuration's own, and their providers call the global fetch.
  const cassettes = config.cassettes && createCassettes(config.cassettes, log);
  const declared = (d: Declared) => {
    const chosen = cassettes ? cassettes.upstreams(d) : d;
    return { ...chosen, upstreams: capUpstreams(chosen.upstreams, config.limits.upstreamMaxBytes) };
  };
  let upstreams: ReturnType<typeof createLive> | undefined;
  const discovery = createDiscovery({ config, database: db, log, upstreams: () => upstreams!.current().declared.upstreams });
  upstreams = createLive(declared(config.upstreams), { modelAliases: config.modelAliases, modelRoutes: config.modelRoutes, cooldownS: config.upstreamCooldownS, ...(redis ? { redis } : {}) }, discovery);
  void discovery.start();
  const chat = createChat({ config, log, upstreams, attachFiles });
  sealKeyIn(config.dataDir);
  onFirstDrop((upstream, beta) => log.warn(`anthropic-beta '${beta}' is not passed on to '${upstream}', which does not take it (its anthropic_betas setting, or parley's table of Bedrock's betas); counted in parley_betas_dropped_total.`));
  const embedder = createEmbeddings({ config, upstreams });
  const counter = createTokenCounter(config, upstreams);
  const endpoints: Endpoint[] = [
    chatCompletions, messages, responses, responsesCompact, responsesWebSocket, completions, embeddings(embedder),
    ...bedrock({ guard, credentials: config.ingressAwsCredentials, mainKey: config.apiKey, control: createControlPlane(upstreams, discovery) }),
    ...docs(() => endpoints),
    ...(config.ui ? ui() : []),
    ...health(upstreams, redis?.status),
    ...modelEndpoints(upstreams, discovery),
    countTokens(counter, keys.access),
    ...root,
    ...fileEndpoints(config, files),
    usageEndpoint(usage),
    ...(usage.metrics ? [metrics(usage.metrics, usage.settle, telemetry)] : []),
    ...adminEndpoints({ config, keys, usage, upstreams, discovery, decoders: [chatCompletions, messages, responses, completions], reload: () => reloader?.(), settings: () => settings?.() ?? entries ?? [] }),
    // Last: the paths with parameters are tried in order, and these take none of the others'.
    ...gemini(counter, embedder, keys.access),
    ...vertex(counter, keys.access),
  ];
  const pipeline = createPipeline(endpoints, {
    chat, guard, log, debug: config.debug, accessLog, telemetry,
    maxBody: config.files.maxUploadBytes + MULTIPART_SLACK,
    bodyTime: { timeoutS: config.limits.bodyTimeoutS, minRate: config.limits.bodyMinRate },
    cors: corsHeaders(config.corsOrigins, EXPOSED),
  });
  const { handle, routes } = pipeline;
  /** What POST /admin/v1/reload does: set by the server (serve.ts) when it can read the configuration again. */
  let reloader: (() => { ok: boolean; message: string }) | undefined;
  let settings: (() => Entry[]) | undefined;
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
    /** Gives POST /admin/v1/reload its work: read the configuration again and put it in force. */
    onReload(reload: () => { ok: boolean; message: string }, entries: () => Entry[]) {
      reloader = reload;
      settings = entries;
    },
    handle: cassettes ? (request: Request, peer?: string | (() => string | undefined)) => cassettes.within(request, (r) => handle(r, peer)) : handle,
    async close() {
      discovery.stop();
      await cassettes?.flush();
      await keys.close();
      await usage.close();
      await telemetry.shutdown();
      redis?.close();
      if (db.opened()) db().close();
    },
  };
}

export type App = ReturnType<typeof createApp>;

/** Redis when REDIS_URL is set (one limit across gateways), else SQLite (one limit across workers). */
function createLimiter(config: Config, db: () => Database, redis: Redis | undefined, counters: PostgresCounters | undefined): RateLimiter {
  if (redis) return createRedisRateLimiter(redis, config.rateLimitRpm, config.rateLimitOnRedisError);
  if (counters) {
    const add = (counter: string, n: number, ttlS: number) => counters.add(`rate:${counter}`, n, ttlS);
    return createSharedRateLimiter(add, config.rateLimitRpm, config.rateLimitOnRedisError, { store: "the database", outage: () => true });
  }
  return createRateLimiter(db, config.rateLimitRpm);
}

function lazy<T>(make: () => T) {
  let made: { value: T } | undefined;
  return Object.assign(() => (made ??= { value: make() }).value, { opened: () => made !== undefined });
}
