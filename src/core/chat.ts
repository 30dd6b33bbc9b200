import type { Config } from "../config.ts";
import { GatewayError, invalidRequest } from "../errors.ts";
import type { Codec, StreamEncoder } from "../wire/codec.ts";
import type { Json } from "../lib/read.ts";
import { guardStream, openChunks, type Chunks } from "../lib/sse.ts";
import { usageTracker } from "../wire/usage.ts";
import type { ChatRequest, InputTokens, SseEvent, StreamEvent, Usage } from "../ir.ts";
import type { Logger } from "../log.ts";
import { takesNative, type NativeReply, type Provider } from "../providers/provider.ts";
import type { Live } from "../routing/live.ts";
import type { Upstream } from "../providers/kind.ts";
import type { Target } from "../routing/routes.ts";
import { incomplete } from "../wire/upstream-errors.ts";
import { createRouted, firstByte, type Observed, type Retry } from "./routed.ts";

export type { Retry } from "./routed.ts";

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
   * Told before each call after a failed one (only clients that asked for progress pass it): the
   * call's number, the most calls this request may make, how long it waits first, and why.
   */
  onRetry?: (retry: Retry) => void;
  /**
   * Told where the request went (the upstream that answered, or was tried last), how long it took to
   * answer and how many calls it took; `free`: that upstream charges nothing for its answers, whatever the model id.
   */
  observe?: (info: Observed) => void;
}

/** A call to an endpoint that is not a chat (embeddings): the same, but no dialects. */
export type EndpointCall = Omit<ChatCall, "input" | "output">;

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
  const routed = createRouted({ config, upstreams });
  return async function chat(call: ChatCall): Promise<ChatOutcome> {
    const { input, output } = call;
    // The native path needs only the model and `stream`, but every route checks the whole body:
    // a bad request gets the same 400/422 whichever upstream (or fallback) would have answered it.
    const request = input.decodeRequest(call.body);
    const requested = request.model ?? config.defaultModel;
    if (!requested) throw invalidRequest("Missing required field 'model', and no DEFAULT_ALPHA_MODEL is set.", "model: required");
    const done = (usage: Usage | undefined, ok = true) => call.onDone?.({ usage, ok });
    const onBreak = (error: GatewayError) => {
      call.onBreak?.(error.message);
      done(undefined, false);
    };
    let filesAttached = false;
    const prepare = request.fileIds.length
      ? async () => {
        if (filesAttached) return;
        await attachFiles?.(request);
        filesAttached = true;
      }
      : undefined;

    const answer = async (provider: Provider, route: Target, upstream: Upstream): Promise<Answer> => {
      const ms = upstream.timeoutMs;
      // Same family with nothing to change (no alias, no files): the client's own body goes up.
      const dialect = input === output && request.fileIds.length === 0 ? input.dialect : undefined;
      const native = dialect && provider.native?.[dialect];
      if (native && takesNative(provider, dialect, route.model, request.model, request.needsNative !== undefined)) {
        // A request only the upstream's own API serves goes up with the upstream's id (an alias, `<upstream>/<model>`) in its body.
        const renamed = !provider.takesNative && route.model !== request.model;
        const body = renamed ? JSON.stringify({ ...call.body, model: route.model }) : call.raw;
        const nativeCall = { body, json: renamed ? undefined : call.body, model: route.model, requested, stream: request.stream, signal: call.signal, headers: call.headers };
        const reply = await firstByte(native(nativeCall).then((reply) => opened(reply, provider.label)), ms, provider.label, abandonStream);
        if (reply.kind === "json") {
          done(reply.usage);
          return { kind: "bytes", bytes: reply.body, contentType: reply.contentType };
        }
        const ending = { last: output.lastEvent, names: output.endEvents, error: (e: GatewayError) => output.streamEncoder(requested, request).error(e), write: output.writeEvents };
        const onEnd = call.onDone && ((tail: string) => done(withInput(output.usageIn?.(tail), reply.input?.())));
        return { kind: "stream", body: guardStream(reply.chunks, reply.first, ending, reply.failure, () => incomplete(provider.label), onBreak, onEnd), contentType: reply.contentType };
      }
      if (request.needsNative) throw invalidRequest(`${request.needsNative.reason} The upstream '${upstream.name}' is of kind ${upstream.kind}.`, `${request.needsNative.field}: not supported on a converted route`);
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

    const facts = { request, ...call.caller };
    return (await routed<Answer>({ requested, facts, signal: call.signal, observe: call.observe, ...(call.onRetry ? { onRetry: call.onRetry } : {}), prepare, answer })) as ChatOutcome;
  };
}

/** An outcome before `attempt` puts its headers on it. */
export type Answer = DistributiveOmit<ChatOutcome, "headers"> & { headers?: Record<string, string> };
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

/** A stream's usage from its last events, with the input read at its start when they left it out. */
function withInput(usage: Usage | undefined, input: InputTokens | undefined): Usage | undefined {
  if (!input || (usage && usage.input.total > 0)) return usage;
  return { input, output: usage?.output ?? 0 };
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
