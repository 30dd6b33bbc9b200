import { KINDS } from "../../providers/kinds.ts";
import { missing } from "../../routing/upstreams.ts";
import type { Live } from "../../routing/live.ts";
import { VERSION } from "../../version.ts";
import type { RedisStatus } from "../../lib/redis.ts";
import type { PlainEndpoint } from "../edge/endpoint.ts";

const INPUT_FORMATS = ["alpha", "beta_messages", "beta_textgen"] as const;

/**
 * Open health endpoints: no key needed, so load balancers and CI can poll them. With REDIS_URL set,
 * /health also says whether this gateway reaches Redis (`redis` pings it).
 */
export function health(upstreams: Live, redis?: () => Promise<RedisStatus>): PlainEndpoint[] {
  // Every upstream by name: `available`, `not_configured`, or `cooling` after failing three times in a row.
  const services = () => Object.fromEntries(upstreams.current().declared.upstreams.map((u) => [u.name, upstreams.status(u.name)]));
  // What proves parley to each configured upstream that has something to say (Bedrock's: api key, static keys, profile or default chain).
  const credentials = () => {
    const said = upstreams.current().declared.upstreams.flatMap((u) => {
      const describe = KINDS[u.kind].credentials;
      if (missing(u)) return [];
      const said = u.shownCredentials ?? describe?.(u.settings);
      return said !== undefined ? [[u.name, said] as const] : [];
    });
    return said.length ? { credentials: Object.fromEntries(said) } : {};
  };
  return [
    {
      kind: "plain", method: "GET", path: "/health", errors: "parley",
      answer: async () => ({
        status: "healthy",
        timestamp: new Date().toISOString(),
        version: VERSION,
        services: services(),
        ...credentials(),
        ...(redis ? { redis: await redis() } : {}),
      }),
      openapi: { summary: "Service health", tags: ["health"], security: [] },
    },
    {
      kind: "plain", method: "GET", path: "/v1/chat/completions/health", errors: "parley",
      answer: () => ({
        status: "healthy",
        timestamp: new Date().toISOString(),
        version: VERSION,
        message: "Chat completions service is running",
        supported_input_formats: INPUT_FORMATS,
        model_routing: "enabled",
      }),
      openapi: { summary: "Chat completions health", tags: ["health"], security: [] },
    },
  ];
}
