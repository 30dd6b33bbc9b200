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
    const wait = <T>(upstreamCall: Promise<T>, abandon?: (late: T) => unknown) =>
      firstByte(upstreamCall, config.upstreamTimeoutMs, route.provider === "alpha" ? "OpenAI upstream" : "AWS Bedrock", abandon);
    let since: number | undefined;
    try {
      const provider = await providers(route.provider);
      if (request.fileIds.length) await attachFiles?.(request);
      since = performance.now();
      const untouched = input === "alpha" && output === "alpha" && route.model === request.model && request.fileIds.length === 0;
      if (untouched && provider.passthrough) {
        const response = await wait(provider.passthrough(call.raw, call.signal), (late) => late.body?.cancel());
        return { kind: "passthrough", response, stream: request.stream };
      }
      if (!request.stream) {
        const reply = await wait(provider.complete(request, route.model, call.signal));
        return { kind: "json", body: CODECS[output].encodeReply(reply, requested) };
      }
      const events = provider.stream(request, route.model, call.signal)[Symbol.asyncIterator]();
      const first = await wait(events.next(), () => events.return?.());
      return { kind: "events", events: relay(first, events, CODECS[output].streamEncoder(requested, request), call.signal, log) };
    } finally {
      call.observe?.({ model: requested, provider: route.provider, upstream_ms: since === undefined ? undefined : Math.round(performance.now() - since) });
    }
  };
}

export type Chat = ReturnType<typeof createChat>;

/**
 * Feeds upstream events through the encoder as they come; an error ends the stream in-format.
 * Leaving early (the client went away) closes the provider's iterator, which cancels the upstream body.
 */
async function* relay(
  first: IteratorResult<StreamEvent>,
  events: AsyncIterator<StreamEvent>,
  encoder: StreamEncoder,
  client: AbortSignal,
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
    if (client.aborted) return;
    if (!(error instanceof GatewayError)) log.warn("stream failed:", error);
    yield* encoder.error(error instanceof GatewayError ? error : new GatewayError(503, "service_unavailable_error", "The upstream stream failed."));
  } finally {
    await events.return?.();
  }
}

/**
 * The upstream call, or a 504 when its first byte takes longer than `ms`. Providers pass the same
 * `ms` to fetch as its idle timeout, so an abandoned call's socket is closed by Bun; `abandon`
 * releases what a late answer brings. A timer and a race, not an AbortController per call: giving
 * fetch a signal of our own cost every request measurably.
 */
function firstByte<T>(upstreamCall: Promise<T>, ms: number, name: string, abandon?: (late: T) => unknown): Promise<T> {
  let timer: Timer | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      upstreamCall.then(abandon, () => {});
      reject(timedOut(name, ms));
    }, ms);
  });
  return Promise.race([upstreamCall, late]).finally(() => clearTimeout(timer));
}
