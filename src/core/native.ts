import type { GatewayError } from "../errors.ts";
import type { InputTokens, SseEvent, Usage } from "../ir.ts";
import { guardStream, openChunks, type Chunks } from "../lib/sse.ts";
import type { NativeCall, NativeReply } from "../providers/provider.ts";
import type { Codec } from "../wire/codec.ts";
import { incomplete } from "../wire/upstream-errors.ts";
import { firstByte } from "./first-byte.ts";

/** A native reply, a stream's with its first chunk read. */
export type Opened = Extract<NativeReply, { kind: "json" }> | OpenedStream;
type OpenedStream = Extract<NativeReply, { kind: "stream" }> & { chunks: Chunks; first: IteratorResult<Uint8Array, unknown> };

/** A same-family call: the client's body goes up, and the reply is opened within the first-byte timeout. */
export function callNative(native: (call: NativeCall) => Promise<NativeReply>, call: NativeCall, label: string, timeoutMs: number): Promise<Opened> {
  return firstByte(native(call).then((reply) => opened(reply, label)), timeoutMs, label, abandonStream);
}

/**
 * A native stream relayed chunk by chunk as it came, guarded: one that breaks or stops short ends
 * with `error`'s event in the client's dialect; `onEnd` gets the usage its last events carry.
 */
export function relayNative(
  reply: OpenedStream,
  output: Codec,
  label: string,
  error: (error: GatewayError) => SseEvent[],
  onBreak: (error: GatewayError) => void,
  onEnd?: (usage: Usage | undefined, ok?: boolean) => void,
) {
  const ending = { last: output.lastEvent, names: output.endEvents, error, write: output.writeEvents, failed: output.failedEvent };
  // A stream the client left before its end: the input read at its start is all that is known.
  const end = onEnd && ((tail: string | undefined) => (tail === undefined ? onEnd(withInput(undefined, reply.input?.()), false) : onEnd(withInput(output.usageIn?.(tail), reply.input?.()))));
  return { kind: "stream" as const, body: guardStream(reply.chunks, reply.first, ending, reply.failure, () => incomplete(label), onBreak, end), contentType: reply.contentType };
}

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
