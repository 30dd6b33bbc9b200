import type { ChatOutcome, Retry } from "../core/chat.ts";
import { GatewayError } from "../errors.ts";
import { sseText } from "../lib/sse.ts";

export const PROGRESS_HEADER = "x-parley-progress";

/**
 * For a client that asks with `x-parley-progress: 1` (parley's own chat): once a streamed call has
 * failed and is retried, the answer starts at once with SSE comments saying what it waits for
 * (`: retry attempt=2 of=3 wait_ms=1200 status=429 retry_after=1`), and the reply follows in the
 * same stream; a final failure then comes as an error event (with its status) in the stream. A
 * call that succeeds at once, and any other client, is answered exactly as before.
 */
export function progressAnswer(work: Promise<ChatOutcome>, headers: Record<string, string>) {
  const comments: string[] = [];
  let wake = () => {};
  let settled: { outcome: ChatOutcome } | { error: unknown } | undefined;
  work.then(
    (outcome) => ((settled = { outcome }), wake()),
    (error) => ((settled = { error }), wake()),
  );

  async function* body(): AsyncGenerator<string | Uint8Array> {
    for (;;) {
      while (comments.length) yield comments.shift()!;
      if (settled) break;
      await new Promise<void>((resolve) => (wake = resolve));
    }
    if ("error" in settled) return yield errorEvent(settled.error);
    const outcome = settled.outcome;
    if (outcome.kind === "events") for await (const event of outcome.events) yield sseText([event]);
    else if (outcome.kind === "stream") yield* outcome.body;
    else {
      // An upstream that answered a stream request with one JSON reply: it goes as one event.
      const text = outcome.kind === "json" ? JSON.stringify(outcome.body) : typeof outcome.bytes === "string" ? outcome.bytes : new TextDecoder().decode(outcome.bytes);
      yield sseText([{ data: oneLine(text) }]) + "data: [DONE]\n\n";
    }
  }

  return {
    /** The response to send once the first retry is known. */
    response: () => new Response(body() as unknown as BodyInit, { headers: { ...headers, "content-type": "text/event-stream", "cache-control": "no-cache" } }),
    retry(retry: Retry) {
      comments.push(`: retry attempt=${retry.attempt} of=${retry.of} wait_ms=${retry.waitMs} status=${retry.status}${retry.retryAfter !== undefined ? ` retry_after=${retry.retryAfter}` : ""}\n\n`);
      wake();
    },
  };
}

function errorEvent(error: unknown): string {
  const known = error instanceof GatewayError ? error : new GatewayError(500, "internal_server_error", "Internal error.");
  return sseText([{ data: { error: { type: known.type, message: known.message, status: known.status, ...(known.retryAfter !== undefined ? { retry_after: known.retryAfter } : {}) } } }]);
}

/** A JSON reply as one event's data (a pretty-printed one would be several SSE lines); text that is no JSON as it is. */
function oneLine(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
