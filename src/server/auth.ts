import type { Budget, Scope } from "../config.ts";
import type { Access } from "../core/access.ts";
import { GatewayError } from "../errors.ts";
import type { Json } from "../lib/read.ts";
import type { TpmDecision } from "../keys/limits.ts";
import type { ActiveKey, Verdict } from "../keys/lookup.ts";
import { forbidden } from "../keys/permits.ts";
import type { Price, Tokens } from "../usage/prices.ts";
import type { UsageService } from "../usage/service.ts";
import type { RateDecision, RateLimiter } from "./rate-limit.ts";

/** The request's key as the server sees it: the lookup's key, and an env key's daily budget (contract 12). */
export interface Principal {
  /** The key's non-secret label (contract 12), for usage records, budgets and rate-limit buckets. */
  label: string;
  scopes: ReadonlySet<Scope>;
  /** An API_KEYS entry's daily budget, counted as it always was (usage/budgets.ts). */
  budget?: Budget;
  key: ActiveKey;
}

const digest = (value: string) => Bun.SHA256.hash(value) as Uint8Array;

/** `main` for API_KEY, an API_KEYS entry's name, else `key-` and the first 8 hex digits of its SHA-256. */
export const labelOf = (entry: { key: string; name?: string }) => entry.name ?? `key-${Buffer.from(digest(entry.key)).toString("hex").slice(0, 8)}`;

export function presentedKey(headers: Headers): string | undefined {
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.get("authorization") ?? "")?.[1]?.trim();
  return bearer || headers.get("x-api-key")?.trim() || undefined;
}

const unauthenticated = (message: string) =>
  new GatewayError(401, "authentication_error", message, { headers: { "www-authenticate": 'Bearer realm="parley"' } });

export interface Guard {
  /** The key lookup (keys/lookup.ts): env keys and the database's, one hash and one Map lookup. */
  identify: (presented: string) => Verdict | undefined;
  /** An env key's daily budget, by label. */
  envBudgets?: ReadonlyMap<string, Budget>;
  /** RATE_LIMIT_RPM; absent when it is 0. */
  limit?: RateLimiter;
  /** A key's own rpm in place of RATE_LIMIT_RPM (undefined for a key without one). */
  rpm?: (key: ActiveKey) => RateDecision | Promise<RateDecision> | undefined;
  /** A key's tokens per minute. */
  tpm?: { check(key: ActiveKey): TpmDecision | undefined; add(key: ActiveKey, tokens: number): void };
  /** Budgets to check, metrics to count refusals in, and what chat routes record into. */
  usage?: UsageService;
  /** What a model call's key may reach, and its budget's hold (server/keys.ts); undefined for an open key. */
  access?: (key: ActiveKey, raw: string, budgeted: boolean) => RequestAccess | undefined;
}

/** The loop's Access, and the settling of the budget's hold when the call is over. */
export interface RequestAccess extends Access {
  /** Once, when the call is over: its real cost (null tokens: it cost nothing, the hold is released). */
  settle(model: string, tokens: Tokens | null, price?: Price): Promise<void> | undefined;
}

/** The principal of a key the lookup knows, or a 401 saying why not (unknown, expired, revoked, disabled, rotated). */
export function principalOf(guard: Guard, presented: string): Principal {
  const verdict = guard.identify(presented);
  if (!verdict) throw unauthenticated("Invalid API key.");
  if (!verdict.ok) throw unauthenticated(verdict.message);
  return principals.get(verdict.key) ?? made(guard, verdict.key);
}

/** One principal per key, made the first time it is seen after a change of the keys (the lookup makes new keys then). */
const principals = new WeakMap<ActiveKey, Principal>();
function made(guard: Guard, key: ActiveKey): Principal {
  const budget = key.source === "env" ? guard.envBudgets?.get(key.label) : undefined;
  const principal: Principal = { label: key.label, scopes: key.scopes, key, ...(budget ? { budget } : {}) };
  principals.set(key, principal);
  return principal;
}

/**
 * The request's key, checked: a principal with `scope` (any of them, when several), within its
 * rate limits (their headers go into `headers`) and, for chats, an env key's daily budget. Answers at
 * once unless a limit or a budget has to be asked.
 */
export function authorize(guard: Guard, request: Request, scope: Scope | readonly Scope[], headers: Record<string, string>, presented?: (request: Request) => string | undefined): Principal | Promise<Principal> {
  const key = presented ? presented(request) : presentedKey(request.headers);
  if (!key) throw unauthenticated("Missing API key: send 'Authorization: Bearer <key>' or 'x-api-key: <key>'.");
  return admit(guard, principalOf(guard, key), scope, headers);
}

/** A known principal, checked as `authorize` checks one: its scope, its rate limits and, for chats, its budget. */
export function admit(guard: Guard, principal: Principal, scope: Scope | readonly Scope[], headers: Record<string, string>): Principal | Promise<Principal> {
  permitted(principal, scope);
  const { key } = principal;
  if (guard.limit || key.rpm !== null || key.tpm !== null || needsBudget(guard, principal, scope)) return limited(guard, principal, scope, headers);
  return principal;
}

async function limited(guard: Guard, principal: Principal, scope: Scope | readonly Scope[], headers: Record<string, string>): Promise<Principal> {
  const { usage } = guard;
  const { key } = principal;
  const own = guard.rpm?.(key);
  const pending = own ?? guard.limit?.(principal.label);
  if (pending) {
    const rate = await pending;
    headers["x-ratelimit-limit"] = String(rate.limit);
    if (rate.remaining !== undefined) headers["x-ratelimit-remaining"] = String(rate.remaining);
    headers["x-ratelimit-reset"] = String(rate.reset);
    if (!rate.allowed) {
      usage?.metrics?.rejected.inc(["rate_limit"]);
      throw rateLimited(rate.reset, own ? `Rate limit of key '${key.label}' (${key.rpm} requests a minute) exceeded.` : "Rate limit exceeded for this API key.");
    }
  }
  const tokens = guard.tpm?.check(key);
  if (tokens && !tokens.allowed) {
    usage?.metrics?.rejected.inc(["rate_limit"]);
    throw rateLimited(tokens.reset, `Tokens-per-minute limit of key '${key.label}' (tpm ${tokens.limit}) reached: ${tokens.used} tokens this minute.`);
  }
  if (needsBudget(guard, principal, scope)) {
    const over = await usage!.budgets!.check(principal.label, principal.budget!);
    if (over) {
      usage!.metrics?.rejected.inc(["budget"]);
      throw overBudget(principal.label, principal.budget!, over.used, over.reset);
    }
  }
  return principal;
}

const needsBudget = ({ usage }: Pick<Guard, "usage">, principal: Principal, scope: Scope | readonly Scope[]) =>
  scope === "chat" && principal.budget !== undefined && usage?.budgets !== undefined;

/** A chat that names uploaded files reads them: its key needs `files:read` too (contract 25). */
export function mayReadNamedFiles(principal: Principal, body: Json): void {
  const named = body.file_ids;
  if (Array.isArray(named) && named.length > 0) permitted(principal, "files:read");
}

function permitted(principal: Principal, scope: Scope | readonly Scope[]): void {
  if (typeof scope === "string" ? principal.scopes.has(scope) : scope.some((s) => principal.scopes.has(s))) return;
  const scopes = typeof scope === "string" ? [scope] : scope;
  const refusal = forbidden(principal.key, { scope: scopes[0]! });
  const message = scopes.length > 1 ? `This key lacks the '${scopes.join("' or '")}' scope needed here.` : refusal!.message;
  throw new GatewayError(403, "permission_error", message);
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

function rateLimited(reset: number, message: string): GatewayError {
  const seconds = Math.max(1, reset - Math.floor(Date.now() / 1000));
  return new GatewayError(429, "rate_limit_error", message, {
    details: `retry after ${seconds} seconds`,
    headers: { "retry-after": String(seconds) },
    retryable: true,
  });
}
