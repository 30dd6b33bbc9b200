import type { Redis } from "../lib/redis.ts";
import type { Route, Target } from "./routes.ts";
import type { Facts } from "./when.ts";

/** How long a session's place is remembered without a request of it (contract 22). */
export const DEFAULT_AFFINITY_TTL_S = 300;

/** The headers that name a session, first found wins (contract 22); then the body's `prompt_cache_key`. */
const SESSION_HEADERS = ["x-parley-session", "x-claude-code-session-id", "session_id"];

/** Characters of a session id that count: longer ones are cut (they are hashed anyway). */
const MAX_SESSION = 256;

/** The request's session, read once and kept on the facts; undefined when it names none. */
export function sessionOf(facts: Facts | undefined): string | undefined {
  if (!facts) return undefined;
  if (facts.session === undefined) {
    let found: string | null = null;
    for (const name of SESSION_HEADERS) {
      const value = facts.headers?.get(name);
      if (value) {
        found = value;
        break;
      }
    }
    found ??= facts.promptCacheKey?.() ?? null;
    facts.session = found === null ? null : found.slice(0, MAX_SESSION);
  }
  return facts.session ?? undefined;
}

/** Whether a route keeps sessions on one target: it has more than one, and `affinity` is not "none". */
export const keepsSessions = (route: Route) => route.targets.length > 1 && route.affinity !== "none";

/**
 * A session on one route for one model asked: the key its place is remembered under (64 bits, as
 * two 32-bit MurmurHash3: Bun's 64-bit hashes are BigInts, several times slower to make and print).
 */
export function placeKey(session: string, route: Route): string {
  const text = `${session}\u0000${route.name ?? ""}\u0000${route.requested}`;
  return `${Bun.hash.murmur32v3(text, 0x9e3779b9).toString(36)}.${Bun.hash.murmur32v3(text, 0x85ebca6b).toString(36)}`;
}

const TWO_32 = 2 ** 32;

/**
 * Weighted rendezvous hashing (highest random weight): each target scores `weight / -ln(u)`, `u`
 * a hash of (place, target) in (0, 1), and the targets go best first. Every process computes the
 * same order with no shared state, a target's share of sessions is its share of the weight, and a
 * target added or removed moves only the sessions that go to or came from it.
 */
export function byRendezvous(targets: readonly Target[], place: string): Target[] {
  const seed = Bun.hash.murmur32v3(place);
  const scored: { target: Target; score: number }[] = [];
  for (const target of targets) {
    const u = (Bun.hash.murmur32v3(`${target.upstream}\u0000${target.model}`, seed) + 0.5) / TWO_32;
    const entry = { target, score: (target.weight ?? 1) / -Math.log(u) };
    // Insertion, best first: routes have a handful of targets, and Array.sort's call costs more than the work.
    let at = scored.length;
    while (at > 0 && scored[at - 1]!.score < entry.score) at--;
    scored.splice(at, 0, entry);
  }
  return scored.map((s) => s.target);
}

/** Where sessions are: the upstream each one's requests go to, until `ttlS` pass without one. */
export interface Sessions {
  /** The upstream the session is on; undefined for a session not seen within its TTL. A seen one's TTL starts again. */
  on(place: string, ttlS: number): string | undefined | Promise<string | undefined>;
  /** The session is on `upstream` now (new, or moved). */
  put(place: string, upstream: string, ttlS: number): void;
}

/** Places a process keeps before it sweeps out the expired ones. */
const SWEEP_AT = 4096;

/** Per process: a Map of place -> upstream and when it expires. */
export function localSessions(now = () => Date.now()): Sessions {
  const places = new Map<string, { upstream: string; until: number }>();
  let sweepAt = SWEEP_AT;
  const sweep = (at: number) => {
    for (const [place, entry] of places) if (entry.until <= at) places.delete(place);
    sweepAt = Math.max(SWEEP_AT, places.size * 2);
  };
  return {
    on(place, ttlS) {
      const entry = places.get(place);
      if (!entry) return undefined;
      const at = now();
      if (entry.until <= at) {
        places.delete(place);
        return undefined;
      }
      entry.until = at + ttlS * 1000;
      return entry.upstream;
    },
    put(place, upstream, ttlS) {
      const at = now();
      places.set(place, { upstream, until: at + ttlS * 1000 });
      if (places.size >= sweepAt) sweep(at);
    },
  };
}

/**
 * Shared through Redis (REDIS_URL): one GETEX per request of a session (read, and its TTL started
 * again), one SET when a session starts or moves. Redis away: this process's own memory answers.
 */
export function redisSessions(redis: Redis, local = localSessions()): Sessions {
  const key = (place: string) => `parley:session:${place}`;
  return {
    async on(place, ttlS) {
      const known = local.on(place, ttlS);
      try {
        const shared = await redis.send("GETEX", [key(place), "EX", String(ttlS)]);
        if (typeof shared !== "string") return known;
        if (shared !== known) local.put(place, shared, ttlS);
        return shared;
      } catch {
        return known;
      }
    },
    put(place, upstream, ttlS) {
      local.put(place, upstream, ttlS);
      redis.send("SET", [key(place), upstream, "EX", String(ttlS)]).catch(() => {});
    },
  };
}

/** What a reply says of its session: `x-parley-session-target`. */
export type Placement = "new" | "kept" | "moved";

/** A session on a route that keeps sessions: where it is, and its targets in the order to try them. */
export interface Affinity {
  place: string;
  ttlS: number;
  /** The upstream it was on; undefined: new. */
  on: string | undefined;
}

/**
 * The targets for a session: the one it is on first (unless it is cooling), then the rest; a new
 * session's first pick is a weighted route's rendezvous pick, an ordered route's first target (its
 * order says which upstream is the primary: a session leaves it only on failure). Cooling ones are
 * left out as `ordered` does.
 */
export function sessionOrder(route: Route, affinity: Affinity, cooling: (upstream: string) => boolean): Target[] {
  const order = route.weighted ? byRendezvous(route.targets, affinity.place) : [...route.targets];
  if (affinity.on !== undefined) {
    const at = order.findIndex((t) => t.upstream === affinity.on);
    if (at > 0) order.unshift(...order.splice(at, 1));
  }
  if (!order.some((t) => cooling(t.upstream))) return order;
  const warm = order.filter((t) => !cooling(t.upstream));
  return warm.length ? warm : order;
}

/** After a target of the session's route answered: remembers where the session is, and says what happened. */
export function settle(sessions: Sessions, affinity: Affinity, upstream: string): Placement {
  if (affinity.on === upstream) return "kept";
  sessions.put(affinity.place, upstream, affinity.ttlS);
  return affinity.on === undefined ? "new" : "moved";
}
