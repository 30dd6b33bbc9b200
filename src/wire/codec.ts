import type { GatewayError } from "../errors.ts";
import type { ChatReply, ChatRequest, Finish, FinishReason, SseEvent, StreamEvent, Usage } from "../ir.ts";
import type { Json } from "../lib/read.ts";
import { sseText } from "../lib/sse.ts";

/** A client dialect a provider may take in its own wire format, with no conversion. */
export type Dialect = "openai-chat" | "openai-responses" | "openai-responses-compaction" | "openai-responses-compact" | "anthropic-messages" | "openai-completions" | "openai-embeddings" | "bedrock-invoke" | "bedrock-converse" | "gemini";

/** Turns IR stream events into a format's server-sent events; keeps its own state in closures. */
export interface StreamEncoder {
  event(event: StreamEvent): SseEvent[];
  /** The stream cannot go on: say so in the format's own way; `end` is not called after. */
  error(error: GatewayError): SseEvent[];
  end(): SseEvent[];
}

/** The client-facing side of a format. */
export interface Codec {
  decodeRequest(body: Json): ChatRequest;
  encodeReply(reply: ChatReply, model: string): unknown;
  streamEncoder(model: string, request: ChatRequest): StreamEncoder;
  /** Text found in the last event of a complete stream: a stream passed through without it was cut short. */
  lastEvent: string;
  /** How the dialect's error event begins, when a stream may end with one the upstream sent (see guardStream). */
  failedEvent?: string;
  /** For dialects that name their events: the names a complete stream may end with (see guardStream). */
  endEvents?: string[];
  /** The wire dialect this codec speaks, when a provider may take it natively (same family, no conversion). */
  dialect?: Dialect;
  /** A dialect whose stream is not server-sent events (Bedrock's event stream) writes its events itself. */
  writeEvents?(events: SseEvent[]): Uint8Array;
  /**
   * The model and whether to stream, for a dialect whose URL names them (Gemini's): the body is then
   * decoded only when something asks for it, as for dialects that write them at its top level.
   */
  named?: { model: string; stream: boolean };
  /** Token counts from the last events of a stream passed through in this dialect, if it carries them. */
  usageIn?(tail: string): Usage | undefined;
}

/** Turns one upstream stream chunk into IR events; keeps its own state in closures. */
export type StreamDecoder<Chunk> = (chunk: Chunk) => StreamEvent[];

export const randomId = (prefix: string) => prefix + crypto.randomUUID().replaceAll("-", "").slice(0, 24);

/** A wire format's finish reason -> IR, keeping the raw word; unknown words are "other". */
export const finishFrom = (table: Record<string, FinishReason>, raw: string | null | undefined): Finish =>
  ({ reason: raw && Object.hasOwn(table, raw) ? table[raw]! : "other", raw: raw ?? "" });

/** IR events as the server-sent events' bytes an upstream of the encoder's dialect sends: an answer made in parley (the mock's) passed through as if from one. */
export async function* sseBytes(encoder: StreamEncoder, events: AsyncIterable<StreamEvent>): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder();
  for await (const event of events) {
    const written = encoder.event(event);
    if (written.length) yield bytes.encode(sseText(written));
  }
  yield bytes.encode(sseText(encoder.end()));
}
