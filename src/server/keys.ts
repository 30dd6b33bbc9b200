import type { Database } from "bun:sqlite";
import { SCOPES, type Budget, type Config } from "../config.ts";
import { GatewayError } from "../errors.ts";
import type { Facts } from "../routing/when.ts";
import { estimateLoaded, loadTokenizer } from "../routing/estimate.ts";
import type { Logger } from "../log.ts";
import { openDatabase } from "../lib/db.ts";
import { createBudgetGate, type Hold } from "../keys/budget-gate.ts";
import { envKeys } from "../keys/env-keys.ts";
import { createKeyRpm, createKeyTpm } from "../keys/limits.ts";
import { createKeyLookup, KEY_CHECK_MS, type ActiveKey } from "../keys/lookup.ts";
import { forbidden, mayReach } from "../keys/permits.ts";
import { openKeys } from "../keys/open.ts";
import type { PriceOf } from "../usage/prices.ts";
import { labelOf, type RequestAccess } from "./auth.ts";
import { createRateLimiter } from "./rate-limit.ts";

/** The env keys as the admin API lists them (read-only, contract 19). */
export interface EnvKeyRecord {
  id: null;
  source: "env";
  name: string;
  scopes: string[];
  /** Where it is set. */
  set_in: "API_KEY" | "API_KEYS";
}

/**
 * Keys at runtime (contract 19), made once per worker: the store and the budget ledger in SQLite
 * under PARLEY_DATA_DIR, the lookup every request asks (env keys served from the same map), the
 * budget gate, and a key's own rpm and tpm.
 */
export function createKeys(config: Config, database: () => Database, log: Logger, priceOf: PriceOf) {
  const entries: { key: string; scopes: readonly string[]; name: string; set: "API_KEY" | "API_KEYS"; budget?: Budget }[] = [
    ...(config.apiKey ? [{ key: config.apiKey, scopes: SCOPES, name: "main", set: "API_KEY" as const }] : []),
    ...config.apiKeys.map((entry) => ({ ...entry, name: labelOf(entry), set: "API_KEYS" as const })),
  ];
  const reservedNames = new Map(entries.map((entry) => [entry.name, entry.set]));
  // A new connection on each call: the lookup's PRAGMA data_version moves with every other connection's commit.
  // DATABASE_URL: keys and spend in Postgres, shared by every gateway (contract 21); else parley.db.
  const opened = openKeys(config.databaseUrl, () => openDatabase(config.dataDir), { reservedNames }, database);
  const { store, ledger } = opened;
  // Postgres's keys are read in the background from now: usually before the first request asks.
  void opened.loaded();
  // Env keys' daily budgets stay where contract 12 put them (usage/budgets.ts, Redis-backed when REDIS_URL is set).
  const lookup = createKeyLookup(store, { fixed: envKeys(entries.map(({ key, name, scopes }) => ({ key, label: name, scopes: scopes as typeof SCOPES }))), log, checkEveryMs: KEY_CHECK_MS });
  const gate = createBudgetGate(ledger, { priceOf });
  const rpm = createKeyRpm((n) => createRateLimiter(database, n));
  const tpm = createKeyTpm(database);
  const listed: EnvKeyRecord[] = entries.map(({ name, scopes, set }) => ({ id: null, source: "env", name, scopes: [...scopes], set_in: set }));
  const envBudgets = new Map(entries.flatMap((entry) => (entry.budget ? [[entry.name, entry.budget] as const] : [])));

  /**
   * What the loop asks of this request's key: undefined for a key with no restriction and no budget
   * (every env key, most runtime keys), so they cost nothing there. `raw` estimates a body that is not a chat.
   */
  function access(key: ActiveKey, raw: string, budgeted: boolean): RequestAccess | undefined {
    if (!key.allowsModel && !key.routes && !key.upstreams && !(budgeted && key.budget)) return undefined;
    let hold: Hold | undefined;
    const result: RequestAccess = {
      refuse(model, route) {
        const no = forbidden(key, route === undefined ? { model } : { route });
        return no && new GatewayError(403, "permission_error", no.message);
      },
      reaches: (upstream) => mayReach(key, upstream),
      unreachable: (model, upstreams) =>
        new GatewayError(403, "permission_error", `Key '${key.label}' may not reach upstream${upstreams.length > 1 ? "s" : ""} '${[...new Set(upstreams)].join("', '")}', where '${model}' goes.`),
      settle(model, tokens, price) {
        const held = hold;
        hold = undefined;
        return held?.settle(model, tokens, price);
      },
    };
    if (budgeted && key.budget) {
      result.reserve = async (model, facts) => {
        // A body that is not a chat (embeddings) has no output to hold for.
        const admitted = await gate(key, model, await inputEstimate(facts, raw), facts?.request ? facts.request.maxTokens : 0);
        if (!admitted.ok) {
          throw new GatewayError(429, "rate_limit_error", admitted.message, { details: admitted.details, headers: { "retry-after": String(admitted.retryAfter) } });
        }
        hold = admitted.hold;
      };
    }
    return result;
  }

  return {
    store, ledger, lookup, rpm, tpm, access, envBudgets,
    /** The env keys, for the admin API's list. */
    envKeys: listed,
    /** Resolves once the keys are first read (Postgres's are read in the background). */
    loaded: opened.loaded,
    /** How long an admin change waits before it answers, so that it is in force everywhere (lookup.ts). */
    inForceAfterMs: opened.inForceAfterMs,
    async close() {
      await lookup.flush();
      await opened.close();
    },
  };
}

export type Keys = ReturnType<typeof createKeys>;

/** A chat's input by the tokenizer; another body (embeddings) by its length: about 4 bytes a token. */
async function inputEstimate(facts: Facts | undefined, raw: string): Promise<number> {
  const request = facts?.request;
  if (!request) return Math.ceil(raw.length / 4);
  await loadTokenizer();
  return estimateLoaded(request);
}
