import { matcher } from "../lib/glob.ts";
import { DEFAULT_AFFINITY_TTL_S, keepsSessions, placeKey, sessionOf, sessionOrder } from "./affinity.ts";
import type { Route, Router } from "./routes.ts";
import type { FileRoute } from "./upstreams-file.ts";
import { conditions, imagesOf, type Facts } from "./when.ts";

export interface Explaining {
  router: Router;
  routes: readonly FileRoute[];
  modelAliases: ReadonlyMap<string, string>;
  modelFallbacks: ReadonlyMap<string, string[]>;
  /** The file the routes come from, to give each one's line. */
  file?: string;
}

/**
 * How one request is routed, for `parley routes explain`: the request's facts, each file route
 * passed over with each of its conditions (yes or no, and what the request has), the route that
 * matched (or the step that routed the id), then the targets in order and the fallbacks after them.
 * The router itself decides: this only listens (`Trace`), so it cannot disagree with `serve`.
 */
export function explain({ router, routes, modelAliases, modelFallbacks, file }: Explaining, requested: string, facts: Facts): string {
  const out: string[] = [];
  const { request } = facts;
  const model = modelAliases.get(requested) ?? requested;
  out.push(`model ${requested}${model !== requested ? ` (MODEL_ALIASES: ${model})` : ""} on ${facts.endpoint ?? "?"}, key ${facts.key ?? "?"}`);
  const flags = request ? `stream ${request.stream}, tools ${(request.tools?.length ?? 0) > 0}, thinking ${request.thinking === true}, images ${imagesOf(facts)}` : "embeddings";
  const headers = [...(facts.headers?.entries() ?? [])].map(([name, value]) => `, ${name}: ${JSON.stringify(value)}`).join("");
  out.push(`  request: ${flags}${headers}`);

  const at = (route: FileRoute) => `route ${JSON.stringify(route.name)} (${file ?? "parley.toml"}:${route.line})`;
  const reasons = (route: FileRoute) => {
    const lines: string[] = [];
    if (route.match !== undefined) {
      const hit = matcher(route.match)(model);
      lines.push(`  match = ${JSON.stringify(route.match)}: ${hit ? "yes" : `no, the id is ${JSON.stringify(model)}`}`);
    }
    for (const c of route.when ? conditions(route.when) : []) lines.push(`  ${c.says}: ${c.holds(facts) ? "yes" : `no, ${c.has(facts)}`}`);
    return lines;
  };
  let step: string | undefined;
  let early = false;
  const skipped: FileRoute[] = [];
  const route = router(requested, facts, { skipped: (r) => skipped.push(r), step: (how, before = false) => ([step, early] = [how, before]) });
  for (const r of skipped) out.push(`${at(r)}: skipped`, ...reasons(r));
  // Routes are passed over in file order: the one that matched comes next.
  const matched = step === undefined ? routes[skipped.length] : undefined;
  if (matched) out.push(`${at(matched)}: matches`, ...reasons(matched));
  else if (early) out.push(`routed by ${step}, before the file's routes`);
  else out.push(`${routes.length ? "no route matched" : "no [[routes]]"}: routed by ${step}`);
  out.push(...targets(route), ...sessions(route, facts));
  for (const fallback of modelFallbacks.get(requested) ?? []) {
    try {
      const next = router(fallback, facts);
      out.push(`then MODEL_FALLBACKS ${fallback}${next.name ? ` (route ${JSON.stringify(next.name)})` : ""}: ${next.targets.map((t) => `${t.upstream} ${t.model}`).join(", ")}`);
    } catch (error) {
      out.push(`then MODEL_FALLBACKS ${fallback}: ${(error as Error).message}`);
    }
  }
  return `${out.join("\n")}\n`;
}

/** What a route does with sessions (contract 22), and where this request's session would start. */
function sessions(route: Route, facts: Facts): string[] {
  const lines = route.promptCache === "off" ? ['prompt_cache = "off": no cache breakpoints added to requests converted to Anthropic'] : [];
  if (route.targets.length < 2) return lines;
  if (!keepsSessions(route)) return [...lines, 'affinity = "none": each request of a session goes where the order above sends it'];
  const ttlS = route.affinityTtlS ?? DEFAULT_AFFINITY_TTL_S;
  lines.push(`affinity = "session": a session stays on one target until ${ttlS} s pass without a request of it; it moves only when that target fails or cools down`);
  const session = sessionOf(facts);
  if (session !== undefined) {
    const first = sessionOrder(route, { place: placeKey(session, route), ttlS, on: undefined }, () => false)[0]!;
    lines.push(`  this request's session starts on ${first.upstream}`);
  }
  return lines;
}

function targets(route: Route): string[] {
  const how = route.weighted ? "targets, the first drawn by weight:" : "targets, in order:";
  return [how, ...route.targets.map((t, i) => `  ${i + 1}. ${t.upstream}: ${t.model}${t.weight !== undefined ? ` (weight ${t.weight})` : ""}`)];
}
