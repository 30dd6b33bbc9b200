import { Elysia } from "elysia";
import { credentialKind } from "../../aws.ts";
import type { Config } from "../../config.ts";
import { configuredProviders } from "../../providers/registry.ts";
import { VERSION } from "../../version.ts";
import type { RedisStatus } from "../redis.ts";

const INPUT_FORMATS = ["alpha", "beta_messages", "beta_textgen"] as const;

/**
 * Open health endpoints: no key needed, so load balancers and CI can poll them. With REDIS_URL set,
 * /health also says whether this gateway reaches Redis (`redis` pings it).
 */
export function healthRoutes(config: Config, redis?: () => Promise<RedisStatus>) {
  const services = Object.fromEntries(
    Object.entries(configuredProviders(config)).map(([name, ok]) => [name, ok ? "available" : "not_configured"]),
  );
  return new Elysia({ name: "parley/health" })
    .get(
      "/health",
      async () => ({
        status: "healthy",
        timestamp: new Date().toISOString(),
        version: VERSION,
        services,
        ...(config.beta.region ? { beta_credentials: credentialKind(config.beta) } : {}),
        ...(redis ? { redis: await redis() } : {}),
      }),
      { detail: { summary: "Service health", tags: ["health"], security: [] } },
    )
    .get(
      "/v1/chat/completions/health",
      () => ({
        status: "healthy",
        timestamp: new Date().toISOString(),
        version: VERSION,
        message: "Chat completions service is running",
        supported_input_formats: INPUT_FORMATS,
        model_routing: "enabled",
      }),
      { detail: { summary: "Chat completions health", tags: ["health"], security: [] } },
    );
}
