import { notFound } from "../errors.ts";
import { traced } from "../telemetry/outgoing.ts";
import type { Upstream } from "./kind.ts";
import { KINDS, missing } from "./kinds.ts";
import type { ListedModel } from "./models.ts";
import type { Provider } from "./provider.ts";

/** An upstream as /health names it: `unreachable` while its model discovery fails. */
export type Status = "available" | "not_configured" | "cooling" | "unreachable";

/**
 * The providers of a set of upstreams, by name: each built on first use (a server that never calls
 * Bedrock never loads its code) and kept. Calling one that is not configured is a 404 naming what to
 * set: a client must not retry it (as a 503, Claude Code retried in silence for three minutes).
 */
export function createProviders(upstreams: readonly Upstream[]) {
  const byName = new Map(upstreams.map((u) => [u.name, u]));
  const lacking = new Map(upstreams.flatMap((u) => {
    const what = missing(u);
    return what ? [[u.name, what] as const] : [];
  }));
  const built = new Map<string, Promise<Provider>>();
  const ready = new Map<string, Provider>();
  const provider = (name: string): Promise<Provider> => {
    let instance = built.get(name);
    if (instance) return instance;
    const upstream = byName.get(name);
    if (!upstream) throw notFound(`No upstream is named '${name}'.`);
    const what = lacking.get(name);
    if (what) throw notFound(`The upstream '${name}' (${upstream.kind}) is not configured: ${what}.`);
    // Its calls carry the trace headers of the request they serve (telemetry/outgoing.ts).
    built.set(name, (instance = KINDS[upstream.kind].build({ ...upstream, fetch: traced(upstream.fetch ?? fetch) })));
    instance.then((p) => ready.set(name, p), () => built.delete(name));
    return instance;
  };
  /** The provider when it is built already: a request need not wait a turn for it. */
  provider.loaded = (name: string): Provider | undefined => ready.get(name);
  provider.configured = (name: string): boolean => byName.has(name) && !lacking.has(name);
  return provider;
}

export type Providers = ReturnType<typeof createProviders>;

/** Each upstream by name: whether it can be called. */
export function configured(upstreams: readonly Upstream[]): Record<string, "available" | "not_configured"> {
  return Object.fromEntries(upstreams.map((u) => [u.name, missing(u) ? "not_configured" : "available"]));
}

/** How each configured upstream that discovers its models lists them (loaded on first use, like the providers). */
export function modelListers(upstreams: readonly Upstream[]): Record<string, () => Promise<ListedModel[]>> {
  const listers: Record<string, () => Promise<ListedModel[]>> = {};
  for (const upstream of upstreams) {
    const list = KINDS[upstream.kind].list;
    if (list && upstream.discover && !missing(upstream)) listers[upstream.name] = () => list(upstream);
  }
  return listers;
}
