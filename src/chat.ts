import { inTurn } from "./attempts.ts";
import type { Config } from "./config.ts";
import { GatewayError, invalidRequest } from "./errors.ts";
import type { Codec, StreamEncoder } from "./formats/codec.ts";
import type { Json } from "./formats/read.ts";
import { guardStream, openChunks, type Chunks } from "./formats/sse.ts";
import { usageTracker } from "./formats/usage.ts";
import type { ChatRequest, SseEvent, StreamEvent, Usage } from "./ir.ts";
import type { Logger } from "./log.ts";
import type { NativeReply, Provider } from "./providers/provider.ts";
import type { Live } from "./providers/live.ts";
import { loadTokenizer, tokenizerLoaded } from "./providers/estimate.ts";
import { ordered, type Route, type Target } from "./providers/routes.ts";
import type { Facts } from "./providers/when.ts";
import { incomplete, timedOut } from "./providers/upstream-errors.ts";

export interface ChatCall {
  /** The client's dialect, which decodes the request, and the one the answer is encoded in. */
  input: Codec;
  output: Codec;
  body: Json;
  /** The body as the client sent it, for the passthrough. */
  raw: string;
  /** The client's request headers, for a native call that reads some (`anthropic-beta`). */
  headers?: Headers;
  /** Who asked, and where: what routes' `when` reads beside the request (contract 15). */
  caller?: { endpoint: string; key: string; headers: Headers };
  /** Aborts when the client goes away. */
  signal: AbortSignal;
  /** Told when a stream breaks after it started: its log line says so. */
  onBreak?: (reason: string) => void;
  /**
   * Told once the completion is over (a stream: when it ends, broken or not), with the tokens the
   * upstream reported, for the usage record.
   */
  onDone?: (done: { usage?: Usage; ok: boolean }) => void;
  /**
   * Told where the request went (the upstream that answered, or was tried last), how long it took to
   * answer and how many calls it took; `free`: that upstream charges nothing for its answers, whatever the model id.
   */
  observe?: (info: { model: string; provider: string; upstream_ms?: number; attempts: number; free: boolean; route?: string }) => void;
}

export type ChatOutcome = { headers: Record<string, string> } & (
  | { kind: "json"; body: unknown }
  /** The upstream's own reply, bytes untouched. */
  | { kind: "bytes"; bytes: ArrayBuffer | string; contentType: string }
  | { kind: "stream"; body: ReadableStream<Uint8Array>; contentType: string }
  | { kind: "events"; events: AsyncGenerator<SseEvent> }
);

export interface ChatDeps {
  config: Pick<Config, "defaultModel" | "modelFallbacks">;
  upstreams: Live;
  log: Logger;
  /** Puts the files named in `file_ids` in front of the last user message. */
  attachFiles?: (request: ChatRequest) => Promise<void>;
}

/**
 * One chat completion: decode, then for the requested model and its fallbacks, route, call the
 * provider (retrying what may succeed on another try) and encode in the format asked for.
 */
export function createChat({ config, upstreams, log, attachFiles }: ChatDeps) {
  const { cooldowns } = upstreams;
  return async function chat(call: ChatCall): Promise<ChatOutcome> {
    const { providers, router, byName } = upstreams.current();
    const { input, output } = call;
    // The native path needs only the model and `stream`, but every route checks the whole body:
    // a bad request gets the same 400/422 whichever upstream (or fallback) would have answered it.
    const request = input.decodeRequest(call.body);
    const requested = request.model ?? config.defaultModel;
    if (!requested) throw invalidRequest("Missing required field 'model', and no DEFAULT_ALPHA_MODEL is set.", "model: required");
    const fallbacks = config.modelFallbacks.get(requested);
    const done = (usage: Usage | undefined, ok = true) => call.onDone?.({ usage, ok });
    const onBreak = (error: GatewayError) => {
      call.onBreak?.(error.message);
      done(undefined, false);
    };
    let attempts = 0;
    let since: number | undefined;
    let tried: Target | undefined;
    let routeName: string | undefined;
    let free = false;
    let filesAttached = false;

    const attempt = async ({ target, route }: Try): Promise<ChatOutcome> => {
      tried = target;
      routeName = route.name;
      const provider = providers.loaded(target.upstream) ?? (await providers(target.upstream));
      free = provider.free === true;
      if (request.fileIds.length && !filesAttached) {
        await attachFiles?.(request);
        filesAttached = true;
      }
      attempts++;
      since ??= performance.now();
      const ms = byName.get(target.upstream)!.timeoutMs;
      let outcome: Answer;
      try {
        outcome = await answer(provider, target, ms);
      } catch (error) {
        if (error instanceof GatewayError && error.retryable) cooldowns.failed(target.upstream);
        throw error;
      }
      cooldowns.succeeded(target.upstream);
      outcome.headers = { "x-parley-model": target.model, "x-parley-upstream": target.upstream, "x-parley-attempts": String(attempts), ...(route.name ? { "x-parley-route": route.name } : {}) };
      return outcome as ChatOutcome;
    };

    const answer = async (provider: Provider, route: Target, ms: number): Promise<Answer> => {
      // Same family with nothing to change (no alias, no files): the client's own body goes up.
      const dialect = input === output && request.fileIds.length === 0 ? input.dialect : undefined;
      const native = dialect && provider.native?.[dialect];
      if (native && (provider.takesNative ? provider.takesNative(dialect, route.model) : route.model === request.model)) {
        const nativeCall = { body: call.raw, json: call.body, model: route.model, requested, stream: request.stream, signal: call.signal, headers: call.headers };
        const reply = await firstByte(native(nativeCall).then((reply) => opened(reply, provider.label)), ms, provider.label, abandonStream);
        if (reply.kind === "json") {
          done(reply.usage);
          return { kind: "bytes", bytes: reply.body, contentType: reply.contentType };
        }
        const ending = { last: output.lastEvent, names: output.endEvents, error: (e: GatewayError) => output.streamEncoder(requested, request).error(e) };
        const onEnd = call.onDone && ((tail: string) => done(output.usageIn?.(tail)));
        return { kind: "stream", body: guardStream(reply.chunks, reply.first, ending, reply.failure, () => incomplete(provider.label), onBreak, onEnd), contentType: reply.contentType };
      }
      if (request.needsNative) throw invalidRequest(request.needsNative.reason, `${request.needsNative.field}: not supported on a converted route`);
      if (!request.stream) {
        const reply = await firstByte(provider.complete(request, route.model, call.signal), ms, provider.label);
        done(reply.usage);
        return { kind: "json", body: output.encodeReply(reply, requested) };
      }
      const events = provider.stream(request, route.model, call.signal)[Symbol.asyncIterator]();
      const first = await firstByte(events.next(), ms, provider.label, () => events.return?.());
      const encoder = output.streamEncoder(requested, request);
      return { kind: "events", events: relay(first, events, encoder, provider.label, call.signal, log, onBreak, done) };
    };

    try {
      // Routed once, before the first call; the fallbacks are routed with the same facts.
      const facts: Facts = { request, ...call.caller };
      if (router.countsTokens && !tokenizerLoaded()) await loadTokenizer();
      const route = router(requested, facts);
      const targets = ordered(route, cooldowns.cooling);
      const first: Try = { route, target: targets[0]!, again: false, key: `${targets[0]!.upstream} ${targets[0]!.model}` };
      // Most calls succeed at once: the retry loop starts only after a failure.
      try {
        return await attempt(first);
      } catch (error) {
        const plan = (model: string, known?: Route, listed?: Target[]) => {
          const r = known ?? router(model, facts);
          return { route: r, targets: listed ?? ordered(r, cooldowns.cooling), retries: byName.get((listed ?? r.targets)[0]!.upstream)?.retries ?? 0 };
        };
        return await inTurn(tries([requested, ...(fallbacks ?? [])], plan, { route, targets }), call.signal, attempt, first, error);
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

/** One call of a request: a route's target; `again` when this upstream was tried already for this model (it waits first). */
interface Try {
  route: Route;
  target: Target;
  again: boolean;
  /** The model on the upstream: one that asks for a wait longer than the backoff cap is not called again. */
  key: string;
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
      yield { route, target, again: n >= targets.length, key: `${target.upstream} ${target.model}` };
    }
  }
}

/** An outcome before `attempt` puts its headers on it. */
type Answer = DistributiveOmit<ChatOutcome, "headers"> & { headers?: Record<string, string> };
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

/** A native stream that came after its 504: nobody reads it. */
const abandonStream = (late: Opened) => late.kind === "stream" && late.chunks.cancel().catch(() => {});

export type Chat = ReturnType<typeof createChat>;

/**
 * Feeds upstream events through the encoder as they come; an error ends the stream in-format.
 * Leaving early (the client went away) closes the provider's iterator, which cancels the upstream body.
 */
async function* relay(
  first: IteratorResult<StreamEvent>,
  events: AsyncIterator<StreamEvent>,
  encoder: StreamEncoder,
  label: string,
  client: AbortSignal,
  log: Logger,
  onBreak: (error: GatewayError) => void,
  done: (usage: Usage | undefined, ok?: boolean) => void,
): AsyncGenerator<SseEvent> {
  let finished = false;
  // All the usage the events carried, input with its cache: the same record as the answer passed through would make.
  const usage = usageTracker();
  try {
    for (let next = first; !next.done; next = await events.next()) {
      const event = next.value;
      if (event.type === "finish") finished = true;
      else if (event.type === "usage" || event.type === "start") usage.add(event.usage);
      yield* encoder.event(event);
    }
    if (!finished) throw incomplete(label);
    yield* encoder.end();
    done(usage.usage());
  } catch (error) {
    if (client.aborted) return done(usage.usage(), false);
    if (!(error instanceof GatewayError)) log.error("stream failed:", error);
    const failure = error instanceof GatewayError ? error : new GatewayError(503, "service_unavailable_error", `${label}'s stream failed.`);
    onBreak(failure);
    yield* encoder.error(failure);
  } finally {
    await events.return?.();
  }
}

/** A native reply, a stream's with its first chunk read. */
type Opened = Extract<NativeReply, { kind: "json" }> | (Extract<NativeReply, { kind: "stream" }> & { chunks: Chunks; first: IteratorResult<Uint8Array, unknown> });

/**
 * A native stream's first chunk is read before the answer starts, as a converted stream's first
 * event is: until then nothing has gone to the client, so a stream that fails at once (Bedrock
 * sends throttling as a stream's first frame) is retried like any failed call, and the first-byte
 * timeout covers the wait for it.
 */
async function opened(reply: NativeReply, label: string): Promise<Opened> {
  if (reply.kind === "json") return reply;
  const chunks = openChunks(reply.body);
  try {
    const first = await chunks.next();
    if (first.done) throw incomplete(label, true);
    return { ...reply, chunks, first };
  } catch (error) {
    void chunks.cancel().catch(() => {});
    throw reply.failure(error);
  }
}

/**
 * The upstream call, or a 504 when its first byte takes longer than `ms`. Providers pass the same
 * `ms` to fetch as its idle timeout, so an abandoned call's socket is closed by Bun; `abandon`
 * releases what a late answer brings. A timer per call, not an AbortController per call: giving
 * fetch a signal of our own cost every request measurably. (One coarse timer sweeping a set of
 * waiting calls was tried too: in Bun it cost more than a timer per call.)
 */
function firstByte<T>(upstreamCall: Promise<T>, ms: number, name: string, abandon?: (late: T) => unknown): Promise<T> {
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
