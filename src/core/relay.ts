import { GatewayError } from "../errors.ts";
import type { SseEvent, StreamEvent, Usage } from "../ir.ts";
import type { Logger } from "../log.ts";
import type { StreamEncoder } from "../wire/codec.ts";
import { incomplete } from "../wire/upstream-errors.ts";
import { usageTracker } from "../wire/usage.ts";

/**
 * A converted stream: feeds upstream events through the encoder as they come; an error ends the
 * stream in-format. Leaving early (the client went away) closes the provider's iterator, which
 * cancels the upstream body.
 */
export async function* relay(
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
