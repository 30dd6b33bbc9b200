import { GatewayError, invalidRequest } from "../errors.ts";
import type { ChatReply, ChatRequest, SseEvent, Usage } from "../ir.ts";
import type { Json } from "../lib/read.ts";
import type { Logger } from "../log.ts";
import type { Upstream } from "../providers/kind.ts";
import { takesNative, type Provider } from "../providers/provider.ts";
import type { Live } from "../routing/live.ts";
import type { Target } from "../routing/routes.ts";
import type { Codec } from "../wire/codec.ts";
import type { Access } from "./access.ts";
import { firstByte } from "./first-byte.ts";
import { ATTR, NO_TRACE, NOOP_SPAN, type Span, type Trace } from "../telemetry/index.ts";
import { attemptDone, createLoop, type Observed, type Retry } from "./loop.ts";
import { callNative, relayNative } from "./native.ts";
import { relay } from "./relay.ts";
import { ClientRequest } from "./request.ts";

export type { Observed, Retry } from "./loop.ts";

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
  /** What the caller's key may reach, and its budget (absent: an open key). */
  access?: Access;
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
  /** The request's SERVER span and the client's trace headers (contract 24). */
  trace?: Trace;
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

/** What the core reads of the configuration. */
export interface CoreOptions {
  defaultModel?: string;
  /** MODEL_FALLBACKS. */
  modelFallbacks: ReadonlyMap<string, readonly string[]>;
}

export interface ChatDeps {
  config: CoreOptions;
  upstreams: Live;
  log: Logger;
  /** Puts the files named in `file_ids` in front of the last user message. */
  attachFiles?: (request: ChatRequest) => Promise<void>;
}

/** An outcome before the loop puts its headers on it. */
export type Answer = DistributiveOmit<ChatOutcome, "headers"> & { headers?: Record<string, string> };
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

/**
 * One chat completion, through the loop (loop.ts): this file says only how one call to one target
 * is answered. Same family with nothing to change, the client's own body goes up and the reply
 * comes back as sent; otherwise the request goes through the IR, and the answer is encoded in the
 * format asked for.
 */
export function createChat({ config, upstreams, log, attachFiles }: ChatDeps) {
  const loop = createLoop({ modelFallbacks: config.modelFallbacks, upstreams });
  return async function chat(call: ChatCall): Promise<ChatOutcome> {
    const { input, output, signal } = call;
    const asked = new ClientRequest(input, call.body, call.caller);
    const requested = asked.model ?? config.defaultModel;
    if (!requested) throw invalidRequest("Missing required field 'model', and no DEFAULT_ALPHA_MODEL is set.", "model: required");
    const trace = call.trace ?? NO_TRACE;
    if (trace.span !== NOOP_SPAN) askedOn(trace.span, asked, call.body);
    const done = (usage: Usage | undefined, ok = true) => call.onDone?.({ usage, ok });
    const onBreak = (error: GatewayError) => {
      call.onBreak?.(error.message);
      done(undefined, false);
    };
    // Same family with nothing to change (no files to attach): the client's own body may go up.
    const dialect = input === output && !asked.namesFiles ? input.dialect : undefined;

    const answer = async (provider: Provider, target: Target, upstream: Upstream, attempt: Span): Promise<Answer> => {
      // The call's span ends with its answer: a stream's when it ends, or breaks.
      const over = (usage: Usage | undefined, ok = true) => {
        attemptDone(attempt, target.model, usage);
        done(usage, ok);
      };
      const broke = (error: GatewayError) => {
        attempt.fail(error.type, error.message);
        attempt.end();
        onBreak(error);
      };
      const native = dialect && provider.native?.[dialect];
      // Whether only the upstream's own API serves it matters only for another id on a provider that does not say (and decodes the request).
      if (native && takesNative(provider, dialect, target.model, asked.model, !provider.takesNative && target.model !== asked.model && asked.request.needsNative !== undefined)) {
        // A request only the upstream's own API serves goes up with the upstream's id (an alias, `<upstream>/<model>`) in its body.
        const renamed = !provider.takesNative && target.model !== asked.model;
        const body = renamed ? JSON.stringify({ ...call.body, model: target.model }) : call.raw;
        const nativeCall = { body, json: renamed ? undefined : call.body, model: target.model, requested, stream: asked.stream, signal, headers: call.headers };
        const reply = await callNative(native, nativeCall, provider.label, upstream.timeoutMs);
        if (reply.kind === "json") {
          if (attempt !== NOOP_SPAN) trace.span.messages(undefined, { toJSON: () => parsed(reply.body) });
          over(reply.usage);
          return { kind: "bytes", bytes: reply.body, contentType: reply.contentType };
        }
        const error = (e: GatewayError) => output.streamEncoder(requested, asked.forEncoder()).error(e);
        return relayNative(reply, output, provider.label, error, broke, call.onDone || attempt !== NOOP_SPAN ? over : undefined);
      }
      // The route's `prompt_cache = "off"`: no breakpoints added for this target.
      const request = target.promptCache === "off" && asked.request.autoCache ? { ...asked.request, autoCache: false } : asked.request;
      if (request.needsNative) throw invalidRequest(`${request.needsNative.reason} The upstream '${upstream.name}' is of kind ${upstream.kind}.`, `${request.needsNative.field}: not supported on a converted route`);
      if (!request.stream) {
        const reply = await firstByte(provider.complete(request, target.model, signal), upstream.timeoutMs, provider.label);
        if (attempt !== NOOP_SPAN) replied(trace.span, attempt, reply);
        over(reply.usage);
        return { kind: "json", body: output.encodeReply(reply, requested) };
      }
      const events = provider.stream(request, target.model, signal)[Symbol.asyncIterator]();
      const first = await firstByte(events.next(), upstream.timeoutMs, provider.label, () => events.return?.());
      const encoder = output.streamEncoder(requested, request);
      return { kind: "events", events: relay(first, events, encoder, provider.label, signal, log, broke, over) };
    };

    let attached = false;
    const prepare = asked.namesFiles && attachFiles
      ? async () => {
        if (attached) return;
        await attachFiles(asked.request);
        attached = true;
      }
      : undefined;
    return (await loop<Answer>({ requested, facts: asked, signal, access: call.access, observe: call.observe, onRetry: call.onRetry, prepare, answer, trace })) as ChatOutcome;
  };
}

export type Chat = ReturnType<typeof createChat>;

/** What the request asked of the model, on its span; its messages only when content is captured (Span.messages). */
function askedOn(span: Span, asked: ClientRequest, body: Json): void {
  const { maxTokens, temperature } = asked.settings();
  if (typeof maxTokens === "number") span.set(ATTR.maxTokens, maxTokens);
  if (typeof temperature === "number") span.set(ATTR.temperature, temperature);
  span.messages(body.messages ?? body.input ?? body.contents ?? body.prompt, undefined);
}

/** A converted reply, read already: its id and finish reason on both spans, and its text if content is captured. */
function replied(server: Span, attempt: Span, reply: ChatReply): void {
  const finish = [reply.finish.raw];
  for (const span of [server, attempt]) span.set(ATTR.responseId, reply.id).set(ATTR.finishReasons, finish);
  server.messages(undefined, reply.content);
}

/** A passed-through reply, parsed only when its content is exported. */
function parsed(body: string | ArrayBuffer): unknown {
  try {
    return JSON.parse(typeof body === "string" ? body : new TextDecoder().decode(body));
  } catch {
    return undefined;
  }
}
