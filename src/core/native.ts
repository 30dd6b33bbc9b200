import type { GatewayError } from "../errors.ts";
import type { InputTokens, Usage } from "../ir.ts";
import { guardStream, openChunks, type Chunks, type StreamEnding } from "../lib/sse.ts";
import type { NativeCall, NativeReply } from "../providers/provider.ts";
import type { Codec } from "../wire/codec.ts";
import { incomplete } from "../wire/upstream-errors.ts";
import { firstByte } from "./first-byte.ts";

/** What one native call needs beside the call itself: the dialect it answers in, and whom to tell how it ended. */
export interface NativeAnswer {
  output: Codec;
  label: string;
  timeoutMs: number;
  /** An error event in the client's dialect, for a stream that breaks. */
  error(error: GatewayError): ReturnType<StreamEnding["error"]>;
  done(usage: Usage | undefined, ok?: boolean): void;
  onBreak(error: GatewayError): void;
  /** Whether anyone reads the stream's usage at its end. */
  counted: boolean;
}

/** A same-family call: the upstream's reply goes back as it came, a JSON one as bytes, a stream relayed chunk by chunk and guarded. */
export async function answerNative(
  native: (call: NativeCall) => Promise<NativeReply>,
  call: NativeCall,
  { output, label, timeoutMs, error, done, onBreak, counted }: NativeAnswer,
) {
  const reply = await firstByte(native(call).then((reply) => opened(reply, label)), timeoutMs, label, abandonStream);
  if (reply.kind === "json") {
    done(reply.usage);
    return { kind: "bytes" as const, bytes: reply.body, contentType: reply.contentType };
  }
  const ending = { last: output.lastEvent, names: output.endEvents, error, write: output.writeEvents };
  const onEnd = counted ? (tail: string) => done(withInput(output.usageIn?.(tail), reply.input?.())) : undefined;
  return { kind: "stream" as const, body: guardStream(reply.chunks, reply.first, ending, reply.failure, () => incomplete(label), onBreak, onEnd), contentType: reply.contentType };
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

/** A native stream that came after its 504: nobody reads it. */
const abandonStream = (late: Opened) => late.kind === "stream" && late.chunks.cancel().catch(() => {});

/** A stream's usage from its last events, with the input read at its start when they left it out. */
function withInput(usage: Usage | undefined, input: InputTokens | undefined): Usage | undefined {
  if (!input || (usage && usage.input.total > 0)) return usage;
  return { input, output: usage?.output ?? 0 };
}
