import { timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import { SCOPES, type Config, type Scope } from "../config.ts";
import { GatewayError } from "../errors.ts";
import type { RateLimiter } from "./rate-limit.ts";

export interface Principal {
  /** A short, non-secret label for logs and rate-limit buckets. */
  id: string;
  scopes: ReadonlySet<Scope>;
}

const digest = (value: string) => Bun.SHA256.hash(value) as Uint8Array;

/** Key -> principal. Every key is compared, in constant time, so timing tells nothing. */
export function createKeyring(config: Pick<Config, "apiKey" | "apiKeys">) {
  const keys = [
    ...(config.apiKey ? [{ key: config.apiKey, scopes: SCOPES }] : []),
    ...config.apiKeys,
  ].map(({ key, scopes }) => ({
    hash: digest(key),
    principal: { id: Buffer.from(digest(key)).toString("hex").slice(0, 12), scopes: new Set(scopes) } as Principal,
  }));

  return function identify(presented: string | undefined): Principal | undefined {
    if (!presented) return undefined;
    const hash = digest(presented);
    let found: Principal | undefined;
    for (const key of keys) if (timingSafeEqual(key.hash, hash)) found = key.principal;
    return found;
  };
}

export type Keyring = ReturnType<typeof createKeyring>;

function presentedKey(headers: Headers): string | undefined {
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.get("authorization") ?? "")?.[1]?.trim();
  return bearer || headers.get("x-api-key")?.trim() || undefined;
}

const unauthenticated = (message: string) =>
  new GatewayError(401, "authentication_error", message, { headers: { "www-authenticate": 'Bearer realm="parley"' } });

export interface Guard {
  identify: Keyring;
  /** Absent when RATE_LIMIT_RPM is 0. */
  limit?: RateLimiter;
}

/** `{ scope: "chat" }` on a route makes it need a key with that scope, within the key's rate limit. */
export function auth({ identify, limit }: Guard) {
  return new Elysia({ name: "parley/auth" }).macro({
    scope: (scope: Scope) => ({
      async resolve({ request, set }) {
        const key = presentedKey(request.headers);
        if (!key) throw unauthenticated("Missing API key: send 'Authorization: Bearer <key>' or 'x-api-key: <key>'.");
        const principal = identify(key);
        if (!principal) throw unauthenticated("Invalid API key.");
        if (limit) {
          const rate = await limit(principal.id);
          set.headers["x-ratelimit-limit"] = String(rate.limit);
          if (rate.remaining !== undefined) set.headers["x-ratelimit-remaining"] = String(rate.remaining);
          set.headers["x-ratelimit-reset"] = String(rate.reset);
          if (!rate.allowed) throw rateLimited(rate.reset);
        }
        if (!principal.scopes.has(scope)) {
          throw new GatewayError(403, "permission_error", `This key lacks the '${scope}' scope needed here.`);
        }
        return { principal };
      },
    }),
  });
}

function rateLimited(reset: number): GatewayError {
  const seconds = Math.max(1, reset - Math.floor(Date.now() / 1000));
  return new GatewayError(429, "rate_limit_error", "Rate limit exceeded for this API key.", {
    details: `retry after ${seconds} seconds`,
    headers: { "retry-after": String(seconds) },
    retryable: true,
  });
}
