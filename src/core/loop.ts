import { GatewayError } from "../errors.ts";
import type { Usage } from "../ir.ts";
import type { Upstream } from "../providers/kind.ts";
import type { Provider } from "../providers/provider.ts";
import { loadTokenizer, tokenizerLoaded } from "../routing/estimate.ts";
import { DEFAULT_AFFINITY_TTL_S, keepsSessions, placeKey, sessionOf, sessionOrder, settle, type Affinity, type Sessions } from "../routing/affinity.ts";
import type { Live } from "../routing/live.ts";
import { ordered, type Route, type Target } from "../routing/routes.ts";
import type { Facts } from "../routing/when.ts";
import { ATTR, NO_TRACE, providerName, withTrace, type Span, type Trace } from "../telemetry/index.ts";
import type { Access } from "./access.ts";
import { backoff, pause, waitsTooLong } from "./backoff.ts";

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
  /** The session the request named (contract 22), as sent, read only when asked: the usage record keeps it hashed. */
  session?: () => string | undefined;
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

/** One request for a model: chat, embeddings, legacy completions and count_tokens alike. */
export interface LoopCall<T> {
  /** The model id the client asked for (after the default). */
  requested: string;
  /** What routes' `when` reads: the request (read when a route asks), who sent it, where (contract 15). */
  facts?: Facts;
  signal: AbortSignal;
  observe?: (info: Observed) => void;
  /** Told before each call after a failed one (only clients that asked for progress pass it). */
  onRetry?: (retry: Retry) => void;
  /** What the request's key may reach (absent: everything), and its budget's hold. */
  access?: Access;
  /** Before each call is counted (chat attaches the files it names, once). */
  prepare?: () => Promise<void>;
  /** The request's SERVER span and the client's trace headers: each call is a CLIENT span, its `traceparent` sent upstream. */
  trace?: Trace;
  /**
   * One call to one target; a retryable GatewayError sends the request on to the next. On success it
   * ends `attempt` (its CLIENT span) once the answer is over (a stream: when it ends): see `attemptDone`.
   */
  answer(provider: Provider, target: Target, upstream: Upstream, attempt: Span): Promise<T>;
}

/** What every answer carries: where it came from. */
export type Routed<T> = T & { headers: Record<string, string> };

export interface LoopOptions {
  /** MODEL_FALLBACKS: the models tried, in turn, after a model's own calls failed. */
  modelFallbacks: ReadonlyMap<string, readonly string[]>;
  upstreams: Live;
}

/** One call of a request: a route's target; `again` when this upstream was tried already for this model (it waits first). */
interface Try {
  route: Route;
  target: Target;
  again: boolean;
}

/**
 * A request's calls (contract 10 and 13): route the model; call its first target; after a
 * retryable failure, wait when the next call goes to an upstream tried already, and call the next
 * target, then MODEL_FALLBACKS' models. Cooldowns are kept, the answer and the error get the
 * x-parley-* headers, and `observe` is told once, at the end, where the request went.
 */
export function createLoop({ modelFallbacks, upstreams }: LoopOptions) {
  const { cooldowns, sessions } = upstreams;
  return async function run<T extends { headers?: Record<string, string> }>(call: LoopCall<T>): Promise<Routed<T>> {
    const { providers, router, byName } = upstreams.current();
    const { requested, facts, signal, access } = call;
    const trace = call.trace ?? NO_TRACE;
    const server = trace.span.set(ATTR.requestModel, requested);
    let attempts = 0;
    let since: number | undefined;
    let tried: Try | undefined;
    let free = false;
    try {
      // Routed once, before the first call; the fallbacks are routed with the same facts.
      if (router.countsTokens && !tokenizerLoaded()) await loadTokenizer();
      const refused = access?.refuse(requested);
      if (refused) throw refused;
      const route = router(requested, facts);
      // A session on a route of several targets goes where it went before (contract 22); nothing is read for any other.
      const session = keepsSessions(route) ? sessionOf(facts) : undefined;
      let placing = session === undefined ? undefined : placeOf(sessions, session, route);
      if (placing instanceof Promise) placing = await placing;
      const affinity = placing;
      const inOrder = affinity ? sessionOrder(route, affinity, cooldowns.cooling) : ordered(route, cooldowns.cooling);
      const targets = access ? permitted(access, requested, route, inOrder) : inOrder;
      if (access?.reserve) await access.reserve(targets[0]!.model, facts);
      // Most calls succeed at once: what the retries need is made only after a failure.
      let rest: Iterator<Try> | undefined;
      let count: (() => number) | undefined;
      let spent: Set<string> | undefined;
      let waits = 0;
      let of = 0;
      for (let turn: Try = { route, target: targets[0]!, again: false }; ;) {
        tried = turn;
        const { target } = turn;
        let last: GatewayError;
        try {
          const provider = providers.loaded(target.upstream) ?? (await providers(target.upstream));
          free = provider.free === true;
          if (call.prepare) await call.prepare();
          attempts++;
          since ??= performance.now();
          const upstream = byName.get(target.upstream)!;
          // Retries and failovers are siblings: each call a child of the request's span.
          const attempt = server.child().set(ATTR.provider, providerName(upstream.kind)).set(ATTR.requestModel, target.model).set(ATTR.upstream, target.upstream);
          let outcome: T;
          try {
            outcome = await (trace === NO_TRACE ? call.answer(provider, target, upstream, attempt) : withTrace(trace, attempt, signal, () => call.answer(provider, target, upstream, attempt)));
          } catch (error) {
            attemptFailed(attempt, error);
            if (error instanceof GatewayError && error.retryable) cooldowns.failed(target.upstream);
            throw error;
          }
          server.set(ATTR.responseModel, target.model);
          cooldowns.succeeded(target.upstream);
          const headers: Record<string, string> = { "x-parley-model": target.model, "x-parley-upstream": target.upstream, "x-parley-attempts": String(attempts) };
          if (turn.route.name) headers["x-parley-route"] = turn.route.name;
          // MODEL_FALLBACKS are never sticky: only the session's own route's targets place it.
          if (affinity && turn.route === route) headers["x-parley-session-target"] = settle(sessions, affinity, target.upstream);
          outcome.headers = headers;
          return outcome as Routed<T>;
        } catch (error) {
          last = retryable(error, signal);
        }

        if (waitsTooLong(last)) (spent ??= new Set()).add(keyOf(turn));
        if (!rest) {
          const models = [requested, ...(modelFallbacks.get(requested) ?? [])];
          const plan = planner(router, facts, byName, cooldowns.cooling, access);
          rest = tries(models, plan, { route, targets });
          count = () => countTries(models, plan, { route, targets });
        }
        const next = unspent(rest, spent);
        if (!next) throw last;
        const wait = next.again ? backoff(++waits, last) : 0;
        if (call.onRetry) {
          of ||= 1 + count!();
          call.onRetry({ attempt: attempts + 1, of, waitMs: Math.round(wait), status: last.status, ...(last.retryAfter !== undefined ? { retryAfter: last.retryAfter } : {}) });
        }
        if (next.again) await pause(wait, signal);
        turn = next;
      }
    } catch (error) {
      if (error instanceof GatewayError) {
        if (attempts > 0) error.headers["x-parley-attempts"] = String(attempts);
        if (tried) error.headers["x-parley-upstream"] = tried.target.upstream;
        if (tried?.route.name) error.headers["x-parley-route"] = tried.route.name;
      }
      throw error;
    } finally {
      if (tried) server.set(ATTR.upstream, tried.target.upstream).set(ATTR.provider, providerName(byName.get(tried.target.upstream)?.kind ?? "")).set(ATTR.route, tried.route.name);
      if (call.observe) {
        const observed: Observed = { model: requested, provider: tried?.target.upstream ?? "-", upstream_ms: since === undefined ? undefined : Math.round(performance.now() - since), attempts, free };
        if (tried?.route.name) observed.route = tried.route.name;
        if (facts) observed.session = () => sessionOf(facts);
        call.observe(observed);
      }
    }
  };
}

export type Loop = ReturnType<typeof createLoop>;

/**
 * A call's answer is over: its CLIENT span gets the model parley asked for (the upstream's own id is
 * not read from a passed-through reply) and the tokens, and ends.
 */
export function attemptDone(attempt: Span, model: string, usage: Usage | undefined): void {
  attempt.set(ATTR.responseModel, model);
  if (usage) attempt.usage(usage);
  attempt.end();
}

/** A failed call: `error.type` is parley's type of error (the upstream's status is in the message). */
function attemptFailed(attempt: Span, error: unknown): void {
  attempt.fail(error instanceof GatewayError ? error.type : "_OTHER", error instanceof Error ? error.message : undefined);
  attempt.end();
}

/** Where a session is on its route: a Map read, or a Redis round trip with REDIS_URL (no promise without). */
function placeOf(sessions: Sessions, session: string, route: Route): Affinity | Promise<Affinity> {
  const place = placeKey(session, route);
  const ttlS = route.affinityTtlS ?? DEFAULT_AFFINITY_TTL_S;
  const on = sessions.on(place, ttlS);
  return on instanceof Promise ? on.then((upstream) => ({ place, ttlS, on: upstream })) : { place, ttlS, on };
}

/** The error, when another call may succeed; thrown again when not (or when the client left). */
function retryable(error: unknown, signal: AbortSignal): GatewayError {
  if (!(error instanceof GatewayError) || !error.retryable || signal.aborted) throw error;
  return error;
}

/** A target as a Retry-After spends it: one model on one upstream (made only after a failure). */
const keyOf = ({ target }: Try) => `${target.upstream} ${target.model}`;

/** The next try whose target no Retry-After has spent. */
function unspent(rest: Iterator<Try>, spent: Set<string> | undefined): Try | undefined {
  for (let next = rest.next(); !next.done; next = rest.next()) if (!spent?.has(keyOf(next.value))) return next.value;
  return undefined;
}

type Plan = (model: string, known?: { route: Route; targets: Target[] }) => { route: Route; targets: Target[]; retries: number };

/**
 * A model's route and its targets in this request's order (the first model's are known already),
 * and how many retries its first target's upstream allows.
 */
function planner(router: (model: string, facts?: Facts) => Route, facts: Facts | undefined, byName: ReadonlyMap<string, Upstream>, cooling: (upstream: string) => boolean, access: Access | undefined): Plan {
  return (model, known) => {
    const route = known?.route ?? router(model, facts);
    const refused = known ? undefined : access?.refuse(model);
    if (refused) throw refused;
    const targets = known?.targets ?? (access ? permitted(access, model, route, ordered(route, cooling)) : ordered(route, cooling));
    return { route, targets, retries: byName.get((known || access ? targets : route.targets)[0]!.upstream)?.retries ?? 0 };
  };
}

/** The targets the key may reach, in order; a 403 when the route, or every target, is not for it. */
function permitted(access: Access, model: string, route: Route, targets: Target[]): Target[] {
  const refused = route.name ? access.refuse(model, route.name) : undefined;
  if (refused) throw refused;
  const reachable = targets.filter((target) => access.reaches(target.upstream));
  if (reachable.length === 0) throw access.unreachable(model, targets.map((target) => target.upstream));
  return reachable;
}

/**
 * The calls after the first: each model's targets in turn, each retry going to the next target,
 * at least one call for each target and 1 + `retries` in all (the first target's upstream's
 * `retries`); then the next model (MODEL_FALLBACKS).
 */
function* tries(models: string[], plan: Plan, first: { route: Route; targets: Target[] }): Generator<Try> {
  for (let m = 0; m < models.length; m++) {
    let planned: ReturnType<Plan>;
    try {
      planned = plan(models[m]!, m === 0 ? first : undefined);
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
