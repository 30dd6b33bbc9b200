import type { Config } from "./config.ts";
import { GatewayError, invalidRequest } from "./errors.ts";
import type { StreamEncoder } from "./formats/codec.ts";
import { CODECS, detectFormat, formatName } from "./formats/detect.ts";
import { isObject } from "./formats/read.ts";
import type { ChatRequest, SseEvent, StreamEvent } from "./ir.ts";
import type { Logger } from "./log.ts";
import type { Providers } from "./providers/registry.ts";
import type { Router } from "./providers/routes.ts";
import { timedOut } from "./providers/upstream-errors.ts";

export interface ChatCall {
  body: unknown;
  /** The body as the client sent it, for the passthrough. */
  raw: string;
  targetFormat?: string;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
  /** Told where the request went and how long the upstream took to answer, for the request log. */
  observe?: (info: { model: string; provider: string; upstream_ms?: number }) => void;
}

export type ChatOutcome =
  | { kind: "json"; body: unknown }
  /** The upstream's own response, bytes untouched. */
  | { kind: "passthrough"; response: Response; stream: boolean }
  | { kind: "events"; events: AsyncGenerator<SseEvent> };

export interface ChatDeps {
  config: Config;
  providers: Providers;
  router: Router;
  log: Logger;
  /** Puts the files named in `file_ids` in front of the last user message. */
  attachFiles?: (request: ChatRequest) => Promise<void>;
}

/** One chat completion: decode, route, call the provider, encode in the format asked for. */
export function createChat({ config, providers, router, log, attachFiles }: ChatDeps) {
  return async function chat(call: ChatCall): Promise<ChatOutcome> {
    if (!isObject(call.body)) throw invalidRequest("The request body must be a JSON object.");
    const input = detectFormat(call.body);
    const output = call.targetFormat === undefined ? "alpha" : formatName(call.targetFormat);
    const request = CODECS[input].decodeRequest(call.body);
    const requested = request.model ?? config.alpha.defaultModel;
    if (!requested) throw invalidRequest("Missing required field 'model', and no DEFAULT_ALPHA_MODEL is set.", "model: required");
    const route = router(requested);
    call.observe?.({ model: requested, provider: route.provider });
    const provider = await providers(route.provider);
    if (request.fileIds.length) await attachFiles?.(request);

    const upstream = deadline(call.signal, config.upstreamTimeoutMs);
    try {
      const untouched = input === "alpha" && output === "alpha" && route.model === request.model && request.fileIds.length === 0;
      if (untouched && provider.passthrough) {
        const response = await provider.passthrough(call.raw, upstream.signal);
        return { kind: "passthrough", response, stream: request.stream };
      }
      if (!request.stream) {
        const reply = await provider.complete(request, route.model, upstream.signal);
        return { kind: "json", body: CODECS[output].encodeReply(reply, requested) };
      }
      const events = provider.stream(request, route.model, upstream.signal)[Symbol.asyncIterator]();
      const first = await events.next();
      return { kind: "events", events: relay(first, events, CODECS[output].streamEncoder(requested, request), upstream, log) };
    } catch (error) {
      throw upstream.timedOut() ? timedOut(route.provider === "alpha" ? "OpenAI upstream" : "AWS Bedrock", config.upstreamTimeoutMs) : error;
    } finally {
      upstream.clear();
      call.observe?.({ model: requested, provider: route.provider, upstream_ms: Math.round(performance.now() - upstream.since) });
    }
  };
}

export type Chat = ReturnType<typeof createChat>;

/** Feeds upstream events through the encoder as they come; an error ends the stream in-format. */
async function* relay(
  first: IteratorResult<StreamEvent>,
  events: AsyncIterator<StreamEvent>,
  encoder: StreamEncoder,
  upstream: ReturnType<typeof deadline>,
  log: Logger,
): AsyncGenerator<SseEvent> {
  let finished = false;
  try {
    for (let next = first; !next.done; next = await events.next()) {
      if (next.value.type === "finish") finished = true;
      yield* encoder.event(next.value);
    }
    if (!finished) throw new GatewayError(503, "service_unavailable_error", "The upstream stream ended before the reply was complete.");
    yield* encoder.end();
  } catch (error) {
    if (upstream.signal.aborted) return;
    if (!(error instanceof GatewayError)) log.warn("stream failed:", error);
    yield* encoder.error(error instanceof GatewayError ? error : new GatewayError(503, "service_unavailable_error", "The upstream stream failed."));
  } finally {
    upstream.abort();
  }
}

/**
 * One signal for the upstream call: aborted when the client goes away or the first byte is late.
 * A listener rather than AbortSignal.any, which cost a fetch ~15 µs more.
 */
function deadline(client: AbortSignal, ms: number) {
  const own = new AbortController();
  const abort = () => own.abort();
  if (client.aborted) abort();
  else client.addEventListener("abort", abort, { once: true });
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    abort();
  }, ms);
  return {
    since: performance.now(),
    signal: own.signal,
    clear: () => clearTimeout(timer),
    timedOut: () => expired,
    abort: () => {
      clearTimeout(timer);
      abort();
    },
  };
}
