import type { Logger } from "../log.ts";
import { matcher } from "../lib/glob.ts";
import { hashSecret } from "./secret.ts";
import type { KeySnapshot, KeyStore } from "./store.ts";
import type { KeyBudget, KeyRecord, KeyScope } from "./types.ts";

/** A key as a request needs it: what it may do, compiled once per change of the keys. */
export interface ActiveKey {
  /** A runtime key's id; `env:<label>` for an env key (what its budget is counted under). */
  id: string;
  /** The non-secret name usage records, budgets and rate limits use (contract 12). */
  label: string;
  source: "env" | "runtime";
  scopes: ReadonlySet<KeyScope>;
  /** null: every model. */
  allowsModel: ((model: string) => boolean) | null;
  routes: ReadonlySet<string> | null;
  upstreams: ReadonlySet<string> | null;
  budget: KeyBudget | null;
  rpm: number | null;
  tpm: number | null;
}

export type Refusal = "expired" | "revoked" | "disabled" | "rotated";

/** A known secret: the key, or why it is refused (a 401 with this message). Unknown secrets get undefined. */
export type Verdict = { ok: true; key: ActiveKey } | { ok: false; reason: Refusal; message: string };

interface Entry {
  key: ActiveKey;
  /** Unix ms; Infinity for never. */
  expiresAt: number;
  refusal?: "revoked" | "disabled";
  /** An old secret after a rotation: accepted until then (Unix ms). */
  until?: number;
}

const TOUCH_EVERY_MS = 1000;

export interface LookupOptions {
  /** Env keys (API_KEY, API_KEYS) by the hex SHA-256 of their secret, served from the same map. */
  fixed?: Iterable<[string, ActiveKey]>;
  log?: Logger;
  /**
   * Asks the store for changes at most this often (0: at every request). The server uses
   * KEY_CHECK_MS and answers a change of the keys only that long after its commit: every worker's
   * next request after the answer is then at least that long after its last question, so it asks
   * again and sees the change. Under load the question is asked once per many requests.
   */
  checkEveryMs?: number;
}

/**
 * How often the server's lookup asks for changes, and how long the admin API waits before it answers
 * a change. Each question costs 4 to 11 µs under load (a read transaction on the WAL): asked at every
 * request it cost the JSON passthrough 4 µs of CPU a request; every 20 ms it costs nothing measurable,
 * and an admin change is answered 21 ms later.
 */
export const KEY_CHECK_MS = 20;

/**
 * The key check on every request: one SHA-256 and one Map lookup, after one cheap question to the
 * store (has any key changed? `PRAGMA data_version` for SQLite; at most every `checkEveryMs`). `last_used_at` is written in
 * batches once a second, never by the request.
 *
 * No constant-time compare: the Map is keyed by the SHA-256 of the presented secret, so whatever
 * its timing reveals is about a hash the client cannot steer (finding a secret whose hash shares a
 * prefix with a stored one is a preimage search), never about the stored secret.
 */
export function createKeyLookup(store: KeyStore, options: LookupOptions = {}) {
  const fixed = [...(options.fixed ?? [])];
  let entries = build({ keys: [], retired: [] }, fixed);
  let used = new Map<string, number>();
  let timer: Timer | undefined;
  let complainedAt = 0;
  const every = options.checkEveryMs ?? 0;
  let askedAt = -Infinity;

  function identify(presented: string): Verdict | undefined {
    const at = every > 0 ? performance.now() : 0;
    if (every === 0 || at - askedAt >= every) {
      askedAt = at;
      const snapshot = changes();
      if (snapshot) entries = build(snapshot, fixed);
    }
    const entry = entries.get(hashSecret(presented));
    if (!entry) return undefined;
    const now = Date.now();
    const reason = entry.refusal ?? (entry.until !== undefined && now >= entry.until ? "rotated" : now >= entry.expiresAt ? "expired" : undefined);
    if (reason) return { ok: false, reason, message: MESSAGES[reason](entry.key.label) };
    if (entry.key.source === "runtime") {
      used.set(entry.key.id, now);
      if (!timer) {
        timer = setTimeout(flush, TOUCH_EVERY_MS);
        timer.unref();
      }
    }
    return { ok: true, key: entry.key };
  }

  /** The database unreadable (contract 21): the keys last known stay in force, and the log says so once a minute. */
  function changes(): KeySnapshot | undefined {
    try {
      return store.changes();
    } catch (error) {
      const now = Date.now();
      if (now - complainedAt >= 60_000) {
        complainedAt = now;
        options.log?.warn("keys cannot be read; the last known keys stay in force:", error);
      }
      return undefined;
    }
  }

  async function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = used;
    used = new Map();
    try {
      await store.touch(batch);
    } catch (error) {
      options.log?.warn(`last_used_at of ${batch.size} keys not written:`, error);
    }
  }

  return {
    identify,
    /** Writes the pending last_used_at now (when the app stops). */
    flush,
  };
}

export type KeyLookup = ReturnType<typeof createKeyLookup>;

const MESSAGES: Record<Refusal, (label: string) => string> = {
  expired: (label) => `API key '${label}' has expired.`,
  revoked: (label) => `API key '${label}' was revoked.`,
  disabled: (label) => `API key '${label}' is disabled.`,
  rotated: (label) => `API key '${label}' was rotated: this secret is no longer accepted; use the new one.`,
};

function build(snapshot: KeySnapshot, fixed: [string, ActiveKey][]): Map<string, Entry> {
  const map = new Map<string, Entry>();
  const byId = new Map<string, Entry>();
  for (const { hash, record } of snapshot.keys) {
    const entry: Entry = { key: activeKey(record), expiresAt: record.expires_at === null ? Infinity : record.expires_at * 1000 };
    if (record.revoked_at !== null) entry.refusal = "revoked";
    else if (record.disabled) entry.refusal = "disabled";
    map.set(hash, entry);
    byId.set(record.id, entry);
  }
  for (const { hash, keyId, until } of snapshot.retired) {
    const current = byId.get(keyId);
    if (current && !map.has(hash)) map.set(hash, { ...current, until });
  }
  // An env key's secret cannot be a runtime key's (those are pk- and 40 random characters); env wins.
  for (const [hash, key] of fixed) map.set(hash, { key, expiresAt: Infinity });
  return map;
}

export function activeKey(record: KeyRecord): ActiveKey {
  return {
    id: record.id,
    label: record.name,
    source: "runtime",
    scopes: new Set(record.scopes),
    allowsModel: record.models === null ? null : anyOf(record.models.map(matcher)),
    routes: record.routes === null ? null : new Set(record.routes),
    upstreams: record.upstreams === null ? null : new Set(record.upstreams),
    budget: record.budget,
    rpm: record.rpm,
    tpm: record.tpm,
  };
}

const anyOf = (tests: ((value: string) => boolean)[]) => (value: string) => tests.some((test) => test(value));
