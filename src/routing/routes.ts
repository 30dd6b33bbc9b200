import { closeMatches } from "../lib/did-you-mean.ts";
import { notFound } from "../errors.ts";
import { matcher } from "../lib/glob.ts";
import type { Upstream } from "../providers/kind.ts";
import { KINDS } from "../providers/kinds.ts";
import type { FileRoute } from "./upstreams-file.ts";
import { missing } from "./upstreams.ts";
import { compile, countsTokens, type Facts } from "./when.ts";

/** One place a request may go: an upstream, and the id it is sent there as. */
export interface Target {
  upstream: string;
  model: string;
  weight?: number;
  /** Its route's `prompt_cache = "off"`: no automatic cache breakpoints on a request converted for it. */
  promptCache?: "off";
}

export interface Route {
  /** The id the client asked for: replies carry it. */
  requested: string;
  /** The file route's name, when a `[[routes]]` entry matched. */
  name?: string;
  /** Where to try, in order (drawn by weight when `weighted`); each retry goes to the next. */
  targets: Target[];
  weighted: boolean;
  /** `affinity = "none"`: sessions are not kept on one target (contract 22). */
  affinity?: "none";
  /** `affinity_ttl_s`: how long a session's place is remembered; absent: the default. */
  affinityTtlS?: number;
  /** `prompt_cache = "off"`: no automatic cache breakpoints on requests converted to Anthropic. */
  promptCache?: "off";
}

/** What the upstreams list, as their `models` and discovery know it (nothing, when it is off). */
export interface Known {
  /** The upstreams that list this id, in declaration order. */
  upstreamsOf(id: string): readonly string[];
  /** Whether an upstream serves this id: unknown when it lists nothing (discovery off or failed). */
  serves(upstream: Upstream, id: string): boolean | undefined;
  ids(): string[];
  /** Why an upstream's discovery fails, while it does (its models are then unknown, or the last list). */
  failure?(upstream: string): string | undefined;
}

const NOTHING_KNOWN: Known = { upstreamsOf: () => [], serves: () => undefined, ids: () => [] };

export interface Routing {
  upstreams: readonly Upstream[];
  routes: readonly FileRoute[];
  modelAliases: ReadonlyMap<string, string>;
  modelRoutes: readonly { pattern: string; upstream: string }[];
}

/** Told how a request was routed, for `parley routes explain`. */
export interface Trace {
  /** A file route passed over: its glob did not match the id, or its `when` did not hold. */
  skipped(route: FileRoute): void;
  /** The step that routed the id, when it was not a file route; `early`: one that comes before them. */
  step(how: string, early?: boolean): void;
}

/**
 * Model id -> where it goes (contract 13), first match wins: MODEL_ALIASES names the model; then
 * `<upstream>/<model>`; MODEL_ROUTES; the file's routes whose `when` holds for the request's facts
 * (contract 15; without facts, only those with no `when`); the upstreams that list the id;
 * `claude-*` to the Anthropic upstreams, then Vertex's, then Bedrock's; the built-in patterns to the upstreams of
 * their kinds, in the kinds' table order.
 */
export function createRouter({ upstreams, routes, modelAliases, modelRoutes }: Routing, known: Known = NOTHING_KNOWN) {
  const byName = new Map(upstreams.map((u) => [u.name, u]));
  const custom = modelRoutes.map(({ pattern, upstream }) => ({ test: matcher(pattern), upstream: byName.get(upstream)! }));
  const file = routes.map((route) => ({ route, test: route.match === undefined ? undefined : matcher(route.match), holds: route.when && compile(route.when), keys: sessionKeys(route) }));
  // Of several upstreams of a kind, the configured ones; none: the first, whose call says what to set.
  const usable = (of: Upstream[]) => {
    const ready = of.filter((u) => !missing(u));
    return ready.length ? ready : of.slice(0, 1);
  };
  const claude = usable(upstreams.filter((u) => KINDS[u.kind].claude !== undefined).sort((a, b) => KINDS[a.kind].claude! - KINDS[b.kind].claude!));
  const builtIn = (Object.keys(KINDS) as (keyof typeof KINDS)[]).flatMap((kind) => {
    const of = usable(upstreams.filter((u) => u.kind === kind));
    return of.length ? (KINDS[kind].patterns ?? []).map((pattern) => ({ pattern, of, kind })) : [];
  });
  const target = (upstream: Upstream, model: string, weight?: number): Target => {
    const named = KINDS[upstream.kind].modelFor?.(model, upstream.settings) ?? model;
    return weight === undefined ? { upstream: upstream.name, model: named } : { upstream: upstream.name, model: named, weight };
  };
  const to = (requested: string, of: readonly Upstream[], model: string): Route => ({ requested, targets: of.map((u) => target(u, model)), weighted: false });
  // The upstreams that may serve the id: one whose list is known and lacks it is left out (an Ollama is
  // not asked for gpt-4o), unless its kind serves ids it does not list (Bedrock's profiles and ARNs).
  const serving = (of: readonly Upstream[], model: string) =>
    of.filter((u) => KINDS[u.kind].unlistedIds || known.serves(u, KINDS[u.kind].modelFor?.(model, u.settings) ?? model) !== false);
  // A route's configured targets; none: all of them, so that the first says what to set.
  const ready = (route: FileRoute) => {
    const some = route.to.filter((t) => byName.has(t.upstream) && !missing(byName.get(t.upstream)!));
    return some.length ? some : route.to;
  };

  function route(requested: string, facts?: Facts, trace?: Trace): Route {
    // No upstream has an id with a lone surrogate, and no URL path or header can carry one.
    if (!requested.isWellFormed()) throw unknownModel(requested, known.ids(), [], []);
    const model = modelAliases.get(requested) ?? requested;
    const slash = model.indexOf("/");
    const addressed = slash > 0 && slash < model.length - 1 ? byName.get(model.slice(0, slash)) : undefined;
    if (addressed) {
      trace?.step(`'${model.slice(0, slash)}/' naming the upstream`, true);
      return to(requested, [addressed], KINDS[addressed.kind].wholeIds ? model : model.slice(slash + 1));
    }
    const routed = custom.find((c) => c.test(model));
    if (routed) {
      trace?.step("MODEL_ROUTES", true);
      return to(requested, [routed.upstream], model);
    }
    for (const { route, test, holds, keys } of file) {
      if ((test && !test(model)) || (holds && !(facts && holds(facts)))) {
        trace?.skipped(route);
        continue;
      }
      const sent = route.model ?? model;
      const targets = ready(route).map((t) => target(byName.get(t.upstream)!, t.model ?? sent, t.weight));
      if (route.promptCache === "off") for (const t of targets) t.promptCache = "off";
      const routed: Route = { requested, name: route.name, targets, weighted: route.weighted };
      return keys ? Object.assign(routed, keys) : routed;
    }
    const listing = known.upstreamsOf(model);
    // A reload may have added a lister this (older) configuration does not have.
    const listed = listing.length ? listing.flatMap((name) => byName.get(name) ?? []) : [];
    // A Claude name Anthropic's API lists still fails over to Bedrock, which lists it by another id.
    const isClaude = model.startsWith("claude-");
    const claudes = isClaude && listed.every((u) => KINDS[u.kind].claude !== undefined) ? serving(claude, model).filter((u) => !listed.includes(u)) : [];
    if (listed.length || claudes.length) {
      trace?.step(listed.length ? "the upstreams that list the id" : "claude-* to the Claude upstreams");
      return to(requested, [...listed, ...claudes], model);
    }
    // Upstreams whose names the id has, left out because their lists lack it: the 404 names them.
    const unlisted = isClaude ? [...claude] : [];
    for (let at = 0; at < builtIn.length; at++) {
      const { pattern, of, kind } = builtIn[at]!;
      if (!pattern.test(model)) continue;
      const some = serving(of, model);
      if (some.length) {
        // An id the kind shares (gemini-*: the Gemini API, then Vertex) goes on to the later kinds' upstreams that take it too.
        const also = KINDS[kind].sharesIds ? builtIn.slice(at + 1).filter((b) => b.kind !== kind && b.pattern.test(model)) : [];
        trace?.step(`the built-in model names of kind ${[kind, ...new Set(also.map((b) => b.kind))].join(", then ")}`);
        return to(requested, also.length ? [...new Set([...some, ...also.flatMap((b) => serving(b.of, model))])] : some, model);
      }
      unlisted.push(...of);
    }
    const failing = upstreams.flatMap((u) => {
      const why = known.failure?.(u.name);
      return why ? [{ upstream: u.name, why }] : [];
    });
    throw unknownModel(requested, known.ids(), unlisted.map((u) => u.name), failing);
  }
  /** Some route asks for a token count: the tokenizer must be loaded before routing. */
  return Object.assign(route, { countsTokens: routes.some((r) => countsTokens(r.when)) });
}

export type Router = ReturnType<typeof createRouter>;

/** A file route's session and cache keys (contract 22) that are not the defaults, made once; none: undefined. */
function sessionKeys({ affinity, affinityTtlS, promptCache }: FileRoute): Pick<Route, "affinity" | "affinityTtlS" | "promptCache"> | undefined {
  if (affinity !== "none" && affinityTtlS === undefined && promptCache !== "off") return undefined;
  return { ...(affinity === "none" ? { affinity } : {}), ...(affinityTtlS !== undefined ? { affinityTtlS } : {}), ...(promptCache === "off" ? { promptCache } : {}) };
}

/**
 * The targets in the order this request tries them: as listed, or drawn by weight (the first by
 * weight, the rest following by weight); upstreams cooling down are skipped unless all of them are.
 */
export function ordered(route: Route, cooling: (upstream: string) => boolean): Target[] {
  const targets = route.weighted ? byWeight(route.targets) : route.targets;
  if (targets.length === 1 || !targets.some((t) => cooling(t.upstream))) return targets;
  const warm = targets.filter((t) => !cooling(t.upstream));
  return warm.length ? warm : targets;
}

function byWeight(targets: Target[]): Target[] {
  const left = [...targets];
  const out: Target[] = [];
  while (left.length) {
    let draw = Math.random() * left.reduce((sum, t) => sum + (t.weight ?? 1), 0);
    const at = left.findIndex((t) => (draw -= t.weight ?? 1) < 0);
    out.push(...left.splice(at < 0 ? left.length - 1 : at, 1));
  }
  return out;
}

/** Characters of an unknown model id the error quotes. */
const QUOTED = 200;

/**
 * The 404 for an id nothing routes: the upstreams whose names it has but whose lists lack it, and
 * those whose discovery fails (an id only they serve routes once it works again).
 */
function unknownModel(requested: string, ids: string[], unlisted: string[], failing: { upstream: string; why: string }[]) {
  const near = closeMatches(requested, ids);
  const hint = near.length ? ` Did you mean ${near.map((id) => `'${id}'`).join(", ")}?` : "";
  const quoted = requested.length > QUOTED ? `${requested.slice(0, QUOTED)}…' (${requested.length} characters)` : `${requested}'`;
  const names = (of: string[]) => of.map((n) => `'${n}'`).join(", ");
  const lacking = unlisted.length ? ` ${names(unlisted)} ${unlisted.length > 1 ? "do" : "does"} not list it.` : "";
  const down = failing.map(({ upstream, why }) => ` Model discovery for '${upstream}' failed (${why}); parley asks again shortly, and an id it lists will route then.`).join("");
  return notFound(`The model '${quoted} is not routed to any upstream.${lacking}${down}${hint} Use an id from GET /v1/models, <upstream>/<model>, or route it with MODEL_ROUTES (pattern=upstream), a route in parley.toml, or MODEL_ALIASES (alias=model).`);
}
