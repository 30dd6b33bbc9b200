import type { Database } from "bun:sqlite";
import type { Logger } from "../log.ts";
import { catalogue } from "../providers/catalogue.ts";
import type { Upstream } from "../providers/kind.ts";
import type { ListedModel } from "../providers/openai/models.ts";
import { modelListers } from "../providers/registry.ts";
import { missing } from "./upstreams.ts";

/** A model as /v1/models and `parley models` show it, and where parley learned of it. */
export interface Listing extends ListedModel {
  /** The upstream that routes the id. */
  provider: string;
  source: "discovered" | "cached" | "catalogue" | "configured" | "alias";
}

interface Known {
  models: ListedModel[];
  ids: Set<string>;
  source: "discovered" | "cached";
  fetchedAt: number;
}

/**
 * The models the configured upstreams really serve: asked in the background at start and every
 * MODELS_REFRESH_S, kept in memory and in SQLite. A failed refresh keeps the last list (from this
 * process or, after a restart, from SQLite); with none at all, the built-in catalogue stands in.
 * Never on a chat's path: routing asks `upstreamsOf`, a set lookup per upstream.
 */
/** What discovery reads of the configuration. */
export interface DiscoveryOptions {
  /** MODELS_REFRESH_S; 0 turns discovery off. */
  modelsRefreshS: number;
  defaultModel?: string;
  modelAliases: ReadonlyMap<string, string>;
}

export function createDiscovery({ config, database, log, upstreams }: { config: DiscoveryOptions; database: () => Database; log: Logger; upstreams: () => readonly Upstream[] }) {
  const known = new Map<string, Known>();
  /** Why each failing upstream's discovery failed; each is asked again sooner than MODELS_REFRESH_S (`retry`). */
  const failing = new Map<string, string>();
  const retries = new Map<string, Timer>();
  let timer: Timer | undefined;
  /** The configured upstreams, as of the configuration in force (worked out once per configuration). */
  const callable = new WeakMap<readonly Upstream[], Upstream[]>();
  const configured = () => {
    const all = upstreams();
    let some = callable.get(all);
    if (!some) callable.set(all, (some = all.filter((u) => !missing(u))));
    return some;
  };

  async function refresh(): Promise<void> {
    const listers = modelListers(upstreams());
    await Promise.all(Object.keys(listers).map((name) => ask(name, listers[name]!)));
  }

  async function ask(name: string, list: () => Promise<ListedModel[]>, attempt = 0): Promise<void> {
    try {
      const models = await list();
      known.set(name, { models, ids: new Set(models.map((m) => m.id)), source: "discovered", fetchedAt: Date.now() });
      save(name, models);
      if (failing.delete(name)) log.info(`model discovery for ${name} works again (${models.length} models)`);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      if (!failing.has(name)) log.warn(`model discovery for ${name} failed; serving ${known.has(name) ? "the last list" : "the cached or built-in list"}:`, why);
      failing.set(name, why);
      if (!known.has(name)) restore(name);
      if (timer && !retries.has(name)) retry(name, attempt);
    }
  }

  // A model server started after parley routes within seconds, not at the next MODELS_REFRESH_S.
  function retry(name: string, attempt: number) {
    const delay = Math.min(RETRY_FIRST_MS * 2 ** attempt, RETRY_MAX_MS, config.modelsRefreshS * 1000);
    const next = setTimeout(() => {
      retries.delete(name);
      const list = failing.has(name) ? modelListers(upstreams())[name] : undefined;
      if (list) void ask(name, list, attempt + 1);
    }, delay);
    next.unref();
    retries.set(name, next);
  }

  function save(name: string, models: ListedModel[]) {
    const db = prepared();
    db.transaction(() => {
      db.run("DELETE FROM discovered_models WHERE provider = ?", [name]);
      const insert = db.prepare("INSERT OR REPLACE INTO discovered_models (provider, id, owned_by, created, fetched_at) VALUES (?, ?, ?, ?, ?)");
      for (const m of models) insert.run(name, m.id, m.owned_by, m.created, Date.now());
    })();
  }

  function restore(name: string) {
    const rows = prepared().query<{ id: string; owned_by: string; created: number; fetched_at: number }, [string]>(
      "SELECT id, owned_by, created, fetched_at FROM discovered_models WHERE provider = ? ORDER BY rowid").all(name);
    if (rows.length === 0) return;
    const models = rows.map(({ id, owned_by, created }) => ({ id, owned_by, created }));
    known.set(name, { models, ids: new Set(models.map((m) => m.id)), source: "cached", fetchedAt: rows[0]!.fetched_at });
  }

  let ready = false;
  function prepared(): Database {
    const db = database();
    if (!ready) {
      db.run(`CREATE TABLE IF NOT EXISTS discovered_models (
        provider TEXT NOT NULL, id TEXT NOT NULL, owned_by TEXT NOT NULL, created INTEGER NOT NULL, fetched_at INTEGER NOT NULL,
        PRIMARY KEY (provider, id))`);
      ready = true;
    }
    return db;
  }

  return {
    /** Starts the background refreshes; MODELS_REFRESH_S=0 turns discovery off (the catalogue only). */
    start(): Promise<void> | undefined {
      if (config.modelsRefreshS === 0 || Object.keys(modelListers(upstreams())).length === 0) return undefined;
      timer = setInterval(() => void refresh(), config.modelsRefreshS * 1000);
      timer.unref();
      return refresh();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
      for (const next of retries.values()) clearTimeout(next);
      retries.clear();
    },
    refresh,

    /** Why an upstream's discovery fails, while it does. */
    failure: (name: string): string | undefined => failing.get(name),

    /** Every id a configured upstream serves, as far as parley knows: for "did you mean". */
    ids(): string[] {
      return configured().flatMap((u) => modelsOf(u)?.models.map((m) => m.id) ?? []);
    },

    /** Whether an upstream serves this id, as far as parley knows (undefined: it does not know). */
    serves(upstream: Upstream, id: string): boolean | undefined {
      if (upstream.models) return upstream.models.includes(id);
      const found = known.get(upstream.name);
      return found ? found.ids.has(id) : undefined;
    },

    /** The upstreams that list this id, in declaration order. */
    upstreamsOf(id: string): readonly string[] {
      let found: string[] | undefined;
      for (const u of configured()) {
        if (u.models ? u.models.includes(id) : known.get(u.name)?.ids.has(id)) (found ??= []).push(u.name);
      }
      return found ?? NONE;
    },

    /** Every model to show, once: listed (or cached) per upstream, else the catalogue; then aliases; each with the upstream `route` sends it to. */
    list(route: (id: string) => string | undefined): Listing[] {
      const listings: Listing[] = [];
      const seen = new Set<string>();
      for (const upstream of configured()) {
        const found = modelsOf(upstream);
        for (const m of found?.models ?? []) {
          if (seen.has(m.id)) continue;
          seen.add(m.id);
          listings.push({ ...m, provider: route(m.id) ?? upstream.name, source: found!.source });
        }
      }
      for (const id of [config.defaultModel, ...config.modelAliases.keys()]) {
        const provider = id && !seen.has(id) ? route(id) : undefined;
        if (provider) listings.push({ id: id!, owned_by: "parley", created: 0, provider, source: "alias" }), seen.add(id!);
      }
      return listings;
    },

    /** One upstream's models as parley knows them, with where that came from. */
    of: (upstream: Upstream) => modelsOf(upstream),
  };

  /** The user's list, else what discovery found, else (for the spec's own upstreams and the mock) the built-in catalogue. */
  function modelsOf(upstream: Upstream): { models: ListedModel[]; source: Listing["source"] } | undefined {
    if (upstream.models) return { models: upstream.models.map((id) => ({ id, owned_by: upstream.name, created: 0 })), source: "configured" };
    const found = known.get(upstream.name);
    if (found) return found;
    if (upstream.origin.file) return undefined;
    return { models: catalogue(upstream.kind), source: "catalogue" };
  }
}

const NONE: readonly string[] = [];
/** A failed discovery is asked again after 2 s, then twice as long each time, never more than 30 s apart. */
const RETRY_FIRST_MS = 2000;
const RETRY_MAX_MS = 30_000;

export type Discovery = ReturnType<typeof createDiscovery>;
