import type { Chat, ChatCall, ChatOutcome, Retry } from "../../core/chat.ts";
import type { Json } from "../../lib/read.ts";
import type { Codec } from "../../wire/codec.ts";
import type { RequestLog } from "../request-log.ts";
import type { trackUsage } from "./track-usage.ts";
import { GatewayError } from "../../errors.ts";
import { sseText } from "../../lib/sse.ts";

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

/** Answers whose log line is written when their request is over, not when they start. */
export const logsItself = new WeakSet<Response>();

/** Progress is for a streamed OpenAI chat whose client asked for it. */
export const wantsProgress = (request: Request, body: Json, output: Codec) =>
  output.dialect === "openai-chat" && (body as { stream?: unknown }).stream === true && request.headers.get(PROGRESS_HEADER) === "1";

/**
 * The chat for a progress client: answered as always unless a retry comes first; then the
 * response starts at once and the retries, the reply or the last error follow in it.
 */
export function withProgress(
  chat: Chat,
  call: ChatCall,
  usage: ReturnType<typeof trackUsage>,
  respond: (outcome: ChatOutcome) => Response,
  headers: Record<string, string>,
  log: RequestLog | undefined,
): Promise<Response> {
  const early = Promise.withResolvers<Response>();
  let progress: ReturnType<typeof progressAnswer> | undefined;
  const work = chat({
    ...call,
    onRetry(retry) {
      if (!progress) {
        progress = progressAnswer(work, headers);
        const response = progress.response();
        logsItself.add(response);
        early.resolve(response);
      }
      progress.retry(retry);
    },
  }).then(usage.answered, usage.failed);
  // An early answer's log line is written when the request is over, with how it ended and where it went.
  const normal = work.then(
    (outcome) => {
      if (!progress) return respond(outcome);
      log?.finish(200);
      return early.promise;
    },
    (error) => {
      if (!progress) throw error;
      log?.finish(typeof (error as { status?: unknown }).status === "number" ? (error as { status: number }).status : 500);
      return early.promise;
    },
  );
  return Promise.race([early.promise, normal]);
}
