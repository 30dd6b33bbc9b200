import type { Database } from "bun:sqlite";
import type { Config, ProviderName } from "../config.ts";
import type { Logger } from "../log.ts";
import { catalogue } from "./catalogue.ts";
import type { ListedModel } from "./openai/models.ts";

/** A model as /v1/models and `parley models` show it, and where parley learned of it. */
export interface Listing extends ListedModel {
  provider: ProviderName;
  source: "discovered" | "cached" | "catalogue" | "alias";
}

/** How each provider lists its models; only configured providers are asked. */
export type Listers = Partial<Record<ProviderName, () => Promise<ListedModel[]>>>;

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
 * Never on a chat's path: routing asks `providerOf`, a set lookup.
 */
export function createDiscovery({ config, database, log, listers }: { config: Pick<Config, "modelsRefreshS" | "alpha" | "modelAliases">; database: () => Database; log: Logger; listers: Listers }) {
  const known = new Map<ProviderName, Known>();
  const failing = new Set<ProviderName>();
  const names = Object.keys(listers) as ProviderName[];
  let timer: Timer | undefined;

  async function refresh(): Promise<void> {
    await Promise.all(names.map(async (name) => {
      try {
        const models = await listers[name]!();
        known.set(name, { models, ids: new Set(models.map((m) => m.id)), source: "discovered", fetchedAt: Date.now() });
        save(name, models);
        if (failing.delete(name)) log.info(`model discovery for ${name} works again (${models.length} models)`);
      } catch (error) {
        if (!failing.has(name)) log.warn(`model discovery for ${name} failed; serving ${known.has(name) ? "the last list" : "the cached or built-in list"}:`, error instanceof Error ? error.message : error);
        failing.add(name);
        if (!known.has(name)) restore(name);
      }
    }));
  }

  function save(name: ProviderName, models: ListedModel[]) {
    const db = prepared();
    db.transaction(() => {
      db.run("DELETE FROM discovered_models WHERE provider = ?", [name]);
      const insert = db.prepare("INSERT OR REPLACE INTO discovered_models (provider, id, owned_by, created, fetched_at) VALUES (?, ?, ?, ?, ?)");
      for (const m of models) insert.run(name, m.id, m.owned_by, m.created, Date.now());
    })();
  }

  function restore(name: ProviderName) {
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
      if (config.modelsRefreshS === 0 || names.length === 0) return undefined;
      timer = setInterval(() => void refresh(), config.modelsRefreshS * 1000);
      timer.unref();
      return refresh();
    },
    stop: () => clearInterval(timer),
    refresh,

    /** Every id a configured provider serves, as far as parley knows: for "did you mean". */
    ids(): string[] {
      return [...names, "mock" as const].flatMap((name) => (known.get(name)?.models ?? catalogue(name)).map((m) => m.id));
    },

    /** The provider whose upstream lists this id, if one does. */
    providerOf(id: string): ProviderName | undefined {
      for (const name of names) if (known.get(name)?.ids.has(id)) return name;
      return undefined;
    },

    /** Every model to show: discovered (or cached) per provider, else the catalogue; then aliases, where `route` sends them. */
    list(configured: Record<ProviderName, boolean>, route: (id: string) => ProviderName | undefined): Listing[] {
      const listings: Listing[] = [];
      for (const name of Object.keys(configured) as ProviderName[]) {
        if (!configured[name]) continue;
        const found = known.get(name);
        if (found) listings.push(...found.models.map((m) => ({ ...m, provider: name, source: found.source })));
        else listings.push(...catalogue(name).map((m) => ({ ...m, provider: name, source: "catalogue" as const })));
      }
      const seen = new Set(listings.map((l) => l.id));
      for (const id of [config.alpha.defaultModel, ...config.modelAliases.keys()]) {
        const provider = id && !seen.has(id) ? route(id) : undefined;
        if (provider) listings.push({ id: id!, owned_by: "parley", created: 0, provider, source: "alias" }), seen.add(id!);
      }
      return listings;
    },
  };
}

export type Discovery = ReturnType<typeof createDiscovery>;
