import type { Upstream } from "../providers/kind.ts";
import type { Redis } from "../lib/redis.ts";
import { localSessions, redisSessions } from "./affinity.ts";
import { createCooldowns } from "./cooldown.ts";
import { createProviders, type Providers, type Status } from "../providers/registry.ts";
import { createRouter, type Known, type Router } from "./routes.ts";
import type { Declared } from "./upstreams.ts";

/** One configuration's upstreams, their providers and its router: a request keeps the one it started with. */
export interface UpstreamSet {
  declared: Declared;
  byName: ReadonlyMap<string, Upstream>;
  providers: Providers;
  router: Router;
}

export interface LiveOptions {
  modelAliases: ReadonlyMap<string, string>;
  modelRoutes: readonly { pattern: string; upstream: string }[];
  cooldownS: number;
  /** Sessions' places are shared through it when set (REDIS_URL). */
  redis?: Redis;
}

/**
 * The upstreams in force, replaced whole on reload (requests in flight finish with the set they
 * began with). Cooldowns are kept by name across reloads, but an upstream whose settings changed starts afresh.
 */
export function createLive(declared: Declared, options: LiveOptions, known: Known) {
  const cooldowns = createCooldowns(options.cooldownS);
  const sessions = options.redis ? redisSessions(options.redis) : localSessions();
  const build = (next: Declared, routes = options.modelRoutes): UpstreamSet => ({
    declared: next,
    byName: new Map(next.upstreams.map((u) => [u.name, u])),
    providers: createProviders(next.upstreams),
    router: createRouter({ upstreams: next.upstreams, routes: next.routes, modelAliases: options.modelAliases, modelRoutes: routes }, known),
  });
  let current = build(declared);
  return {
    current: () => current,
    cooldowns,
    /** Where sessions are (contract 22): kept across reloads, as cooldowns are. */
    sessions,
    /** Puts a new configuration in force; says what changed. */
    replace(next: Declared, modelRoutes = options.modelRoutes): string {
      const before = current;
      current = build(next, modelRoutes);
      for (const [name, upstream] of before.byName) {
        if (JSON.stringify(upstream) !== JSON.stringify(current.byName.get(name))) cooldowns.forget(name);
      }
      return changes(before.byName, current.byName, before.declared.routes.length, next.routes.length);
    },
    status(name: string): Status {
      if (!current.providers.configured(name)) return "not_configured";
      if (cooldowns.cooling(name)) return "cooling";
      return known.failure?.(name) ? "unreachable" : "available";
    },
  };
}

export type Live = ReturnType<typeof createLive>;

function changes(before: ReadonlyMap<string, Upstream>, after: ReadonlyMap<string, Upstream>, routesBefore: number, routesAfter: number): string {
  const added = [...after.keys()].filter((n) => !before.has(n));
  const removed = [...before.keys()].filter((n) => !after.has(n));
  const changed = [...after.keys()].filter((n) => before.has(n) && JSON.stringify(before.get(n)) !== JSON.stringify(after.get(n)));
  const parts = [
    added.length ? `added ${added.join(", ")}` : "",
    changed.length ? `changed ${changed.join(", ")}` : "",
    removed.length ? `removed ${removed.join(", ")}` : "",
    `${routesAfter} route(s)${routesAfter !== routesBefore ? ` (were ${routesBefore})` : ""}`,
  ];
  return parts.filter(Boolean).join("; ");
}
