import { timingSafeEqual } from "node:crypto";
import { SCOPES, type Budget, type Config, type KeyEntry, type Scope } from "../config.ts";
import { GatewayError } from "../errors.ts";
import type { UsageService } from "../usage/service.ts";
import type { RateLimiter } from "./rate-limit.ts";

export interface Principal {
  /** The key's non-secret label (contract 12), for usage records, budgets and rate-limit buckets. */
  label: string;
  scopes: ReadonlySet<Scope>;
  budget?: Budget;
}

const digest = (value: string) => Bun.SHA256.hash(value) as Uint8Array;

/** `main` for API_KEY, an API_KEYS entry's name, else `key-` and the first 8 hex digits of its SHA-256. */
export const labelOf = (entry: Pick<KeyEntry, "key" | "name">) => entry.name ?? `key-${Buffer.from(digest(entry.key)).toString("hex").slice(0, 8)}`;

/** Key -> principal. Every key is compared, in constant time, so timing tells nothing. */
export function createKeyring(config: Pick<Config, "apiKey" | "apiKeys">) {
  const keys = [
    ...(config.apiKey ? [{ key: config.apiKey, scopes: [...SCOPES], name: "main" } as KeyEntry] : []),
    ...config.apiKeys,
  ].map((entry) => ({
    hash: digest(entry.key),
    principal: { label: labelOf(entry), scopes: new Set(entry.scopes), ...(entry.budget ? { budget: entry.budget } : {}) } as Principal,
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

export function presentedKey(headers: Headers): string | undefined {
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.get("authorization") ?? "")?.[1]?.trim();
  return bearer || headers.get("x-api-key")?.trim() || undefined;
}

const unauthenticated = (message: string) =>
  new GatewayError(401, "authentication_error", message, { headers: { "www-authenticate": 'Bearer realm="parley"' } });

export interface Guard {
  identify: Keyring;
  /** Absent when RATE_LIMIT_RPM is 0. */
  limit?: RateLimiter;
  /** Budgets to check, metrics to count refusals in, and what chat routes record into. */
  usage?: UsageService;
}

/**
 * The request's key, checked: a principal with `scope`, within the key's rate limit (its headers
 * go into `headers`) and, for chats, within its daily budget. Answers at once unless a limit or a
 * budget has to be asked.
 */
export function authorize(guard: Guard, request: Request, scope: Scope, headers: Record<string, string>, presented?: (request: Request) => string | undefined): Principal | Promise<Principal> {
  const key = presented ? presented(request) : presentedKey(request.headers);
  if (!key) throw unauthenticated("Missing API key: send 'Authorization: Bearer <key>' or 'x-api-key: <key>'.");
  const principal = guard.identify(key);
  if (!principal) throw unauthenticated("Invalid API key.");
  return admit(guard, principal, scope, headers);
}

/** A known principal, checked as `authorize` checks one: its scope, its rate limit and, for chats, its budget. */
export function admit(guard: Guard, principal: Principal, scope: Scope, headers: Record<string, string>): Principal | Promise<Principal> {
  if (guard.limit || needsBudget(guard, principal, scope)) return limited(guard, principal, scope, headers);
  return permitted(principal, scope);
}

async function limited({ limit, usage }: Guard, principal: Principal, scope: Scope, headers: Record<string, string>): Promise<Principal> {
  if (limit) {
    const rate = await limit(principal.label);
    headers["x-ratelimit-limit"] = String(rate.limit);
    if (rate.remaining !== undefined) headers["x-ratelimit-remaining"] = String(rate.remaining);
    headers["x-ratelimit-reset"] = String(rate.reset);
    if (!rate.allowed) {
      usage?.metrics?.rejected.inc(["rate_limit"]);
      throw rateLimited(rate.reset);
    }
  }
  permitted(principal, scope);
  if (needsBudget({ usage }, principal, scope)) {
    const over = await usage!.budgets!.check(principal.label, principal.budget!);
    if (over) {
      usage!.metrics?.rejected.inc(["budget"]);
      throw overBudget(principal.label, principal.budget!, over.used, over.reset);
    }
  }
  return principal;
}

const needsBudget = ({ usage }: Pick<Guard, "usage">, principal: Principal, scope: Scope) => scope === "chat" && principal.budget !== undefined && usage?.budgets !== undefined;

function permitted(principal: Principal, scope: Scope): Principal {
  if (!principal.scopes.has(scope)) throw new GatewayError(403, "permission_error", `This key lacks the '${scope}' scope needed here.`);
  return principal;
}

function overBudget(label: string, budget: Budget, used: number, reset: number): GatewayError {
  const seconds = Math.max(1, reset - Math.floor(Date.now() / 1000));
  const amount = budget.unit === "usd" ? `$${budget.amount} a day` : `${budget.amount} tokens a day`;
  const spent = budget.unit === "usd" ? `$${used.toFixed(4)}` : `${used} tokens`;
  return new GatewayError(429, "rate_limit_error", `Daily budget of key '${label}' (${amount}) is used up (${spent} today); it resets at 00:00 UTC.`, {
    details: `retry after ${seconds} seconds`,
    headers: { "retry-after": String(seconds) },
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
