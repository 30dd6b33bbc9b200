import type { ActiveKey } from "./lookup.ts";
import type { KeyScope } from "./types.ts";

export type Forbidden = { what: "scope" | "model" | "route" | "upstream"; message: string };

/**
 * Why the key may not make this call (a 403 naming which, contract 19), or undefined when it may.
 * The scope and model are known before routing; the route and upstream once a target is chosen.
 */
export function forbidden(key: ActiveKey, ask: { scope?: KeyScope; model?: string; route?: string | null; upstream?: string }): Forbidden | undefined {
  if (ask.scope !== undefined && !key.scopes.has(ask.scope)) return { what: "scope", message: `This key lacks the '${ask.scope}' scope needed here.` };
  if (ask.model !== undefined && key.allowsModel && !key.allowsModel(ask.model)) return { what: "model", message: `Key '${key.label}' may not call model '${ask.model}'.` };
  if (ask.route && key.routes && !key.routes.has(ask.route)) return { what: "route", message: `Key '${key.label}' may not use route '${ask.route}'.` };
  if (ask.upstream !== undefined && key.upstreams && !key.upstreams.has(ask.upstream)) return { what: "upstream", message: `Key '${key.label}' may not reach upstream '${ask.upstream}'.` };
  return undefined;
}

/** Whether the key may reach an upstream: for the core to skip the targets (and fallbacks) it may not. */
export const mayReach = (key: ActiveKey, upstream: string) => key.upstreams === null || key.upstreams.has(upstream);
