import { inTurn } from "./attempts.ts";
import type { Config } from "../config.ts";
import { GatewayError } from "../errors.ts";
import type { Upstream } from "../providers/kind.ts";
import type { Live } from "../routing/live.ts";
import type { Provider } from "../providers/provider.ts";
import { loadTokenizer, tokenizerLoaded } from "../routing/estimate.ts";
import { ordered, type Route, type Target } from "../routing/routes.ts";
import { timedOut } from "../wire/upstream-errors.ts";
import type { Facts } from "../routing/when.ts";

/** Where a request went, as the request log and the usage record want it. */
export interface Observed {
  model: string;
  /** The upstream that answered, or was tried last. */
  provider: string;
  /** How long the upstream took to answer. */
  upstream_ms?: number;
  attempts: number;
  /** That upstream charges nothing for its answers, whatever the model id. */
  free: boolean;
  route?: string;
}

/** A call after a failed one, as a client that asked for progress is told of it. */
export interface Retry {
  attempt: number;
  /** The most calls this request may make. */
  of: number;
  waitMs: number;
  /** The failed call's status, and the seconds its Retry-After asked for. */
  status: number;
  retryAfter?: number;
}

/** One request for a model, routed: chat, embeddings and legacy completions alike. */
export interface RoutedCall<T> {
  /** The model id the client asked for (after the default). */
  requested: string;
  /** What routes' `when` reads: the decoded request, who sent it, where (contract 15). */
  facts?: Facts;
  signal: AbortSignal;
  observe?: (info: Observed) => void;
  /** Told before each call after a failed one (only clients that asked for progress pass it). */
  onRetry?: (retry: Retry) => void;
  /** Before each call is counted (chat attaches the files it names, once). */
  prepare?: () => Promise<void>;
  /** One call to one target; a retryable GatewayError sends the request on to the next. */
  answer(provider: Provider, target: Target, upstream: Upstream): Promise<T>;
}

/** What every answer carries: where it came from. */
export type Routed<T> = T & { headers: Record<string, string> };

/**
 * A request's calls: route the model, call its first target, and after a retryable failure the
 * next targets and MODEL_FALLBACKS (contract 10). Cooldowns are kept, the answer and the error
 * get the x-parley-* headers, and `observe` is told where the request went.
 */
export function createRouted({ config, upstreams }: { config: Pick<Config, "modelFallbacks">; upstreams: Live }) {
  const { cooldowns } = upstreams;
  return async function routed<T extends { headers?: Record<string, string> }>(call: RoutedCall<T>): Promise<Routed<T>> {
    const { providers, router, byName } = upstreams.current();
    const { requested, facts } = call;
    const fallbacks = config.modelFallbacks.get(requested);
    let attempts = 0;
    let since: number | undefined;
    let tried: Target | undefined;
    let routeName: string | undefined;
    let free = false;

    const attempt = async ({ target, route }: Try): Promise<Routed<T>> => {
      tried = target;
      routeName = route.name;
      const provider = providers.loaded(target.upstream) ?? (await providers(target.upstream));
      free = provider.free === true;
      await call.prepare?.();
      attempts++;
      since ??= performance.now();
      let outcome: T;
      try {
        outcome = await call.answer(provider, target, byName.get(target.upstream)!);
      } catch (error) {
        if (error instanceof GatewayError && error.retryable) cooldowns.failed(target.upstream);
        throw error;
      }
      cooldowns.succeeded(target.upstream);
      outcome.headers = { "x-parley-model": target.model, "x-parley-upstream": target.upstream, "x-parley-attempts": String(attempts), ...(route.name ? { "x-parley-route": route.name } : {}) };
      return outcome as Routed<T>;
    };

    try {
      // Routed once, before the first call; the fallbacks are routed with the same facts.
      if (router.countsTokens && !tokenizerLoaded()) await loadTokenizer();
      const route = router(requested, facts);
      const targets = ordered(route, cooldowns.cooling);
      const first: Try = { route, target: targets[0]!, again: false };
      // Most calls succeed at once: the retry loop starts only after a failure.
      try {
        return await attempt(first);
      } catch (error) {
        const plan = (model: string, known?: Route, listed?: Target[]) => {
          const r = known ?? router(model, facts);
          return { route: r, targets: listed ?? ordered(r, cooldowns.cooling), retries: byName.get((listed ?? r.targets)[0]!.upstream)?.retries ?? 0 };
        };
        const models = [requested, ...(fallbacks ?? [])];
        const onRetry = call.onRetry;
        let of = 0;
        const tell = onRetry && ((waitMs: number, after: GatewayError) => {
          of ||= 1 + countTries(models, plan, { route, targets });
          onRetry({ attempt: attempts + 1, of, waitMs: Math.round(waitMs), status: after.status, ...(after.retryAfter !== undefined ? { retryAfter: after.retryAfter } : {}) });
        });
        return await inTurn(tries(models, plan, { route, targets }), call.signal, attempt, first, error, tell);
      }
    } catch (error) {
      if (error instanceof GatewayError) {
        if (attempts > 0) error.headers["x-parley-attempts"] = String(attempts);
        if (tried) error.headers["x-parley-upstream"] = tried.upstream;
        if (routeName) error.headers["x-parley-route"] = routeName;
      }
      throw error;
    } finally {
      const upstream_ms = since === undefined ? undefined : Math.round(performance.now() - since);
      call.observe?.({ model: requested, provider: tried?.upstream ?? "-", upstream_ms, attempts, free, ...(routeName ? { route: routeName } : {}) });
    }
  };
}

export type RoutedCalls = ReturnType<typeof createRouted>;

/** One call of a request: a route's target; `again` when this upstream was tried already for this model (it waits first). */
interface Try {
  route: Route;
  target: Target;
  again: boolean;
}

/**
 * The calls after the first: each model's targets in turn, each retry going to the next target,
 * at least one call for each target and 1 + `retries` in all (the first target's upstream's
 * `retries`); then the next model (MODEL_FALLBACKS).
 */
function* tries(models: string[], plan: (model: string, route?: Route, targets?: Target[]) => { route: Route; targets: Target[]; retries: number }, first: { route: Route; targets: Target[] }): Generator<Try> {
  for (let m = 0; m < models.length; m++) {
    let planned: ReturnType<typeof plan>;
    try {
      planned = m === 0 ? plan(models[0]!, first.route, first.targets) : plan(models[m]!);
    } catch {
      continue; // A fallback that routes nowhere: the error of the calls made stands, not its 404.
    }
    const { route, targets, retries } = planned;
    const calls = Math.max(1 + retries, targets.length);
    for (let n = m === 0 ? 1 : 0; n < calls; n++) {
      const target = targets[n % targets.length]!;
      yield { route, target, again: n >= targets.length };
    }
  }
}

/** How many calls `tries` may make (a fallback the router cannot place counts for none). */
function countTries(...args: Parameters<typeof tries>): number {
  let count = 0;
  for (const _ of tries(...args)) count++;
  return count;
}

/**
 * The upstream call, or a 504 when its first byte takes longer than `ms`. Providers pass the same
 * `ms` to fetch as its idle timeout, so an abandoned call's socket is closed by Bun; `abandon`
 * releases what a late answer brings. A timer per call, not an AbortController per call: giving
 * fetch a signal of our own cost every request measurably. (One coarse timer sweeping a set of
 * waiting calls was tried too: in Bun it cost more than a timer per call.)
 */
export function firstByte<T>(upstreamCall: Promise<T>, ms: number, name: string, abandon?: (late: T) => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      upstreamCall.then(abandon, () => {});
      reject(timedOut(name, ms));
    }, ms);
    upstreamCall.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
