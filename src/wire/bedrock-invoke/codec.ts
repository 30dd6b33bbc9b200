import type { ChatRequest, SseEvent } from "../../ir.ts";
import { anthropic } from "../anthropic/codec.ts";
import type { Codec, StreamEncoder } from "../codec.ts";
import { exceptionEvent } from "../aws-errors.ts";
import { writeEvents } from "../event-stream/write.ts";
import type { Json } from "../../lib/read.ts";
import { titanText } from "../titan/codec.ts";

/**
 * Bedrock's InvokeModel as a client dialect (`POST /model/{id}/invoke` and
 * `invoke-with-response-stream` on parley): the body is the model family's own. To a Bedrock
 * upstream it goes as sent; to any other, a Claude body (it names `anthropic_version`) reads as
 * Anthropic Messages and a Titan Text body as Titan's, and the answer is written in the same
 * family's shape, a stream as `chunk` events whose `bytes` carry each event's JSON in base64.
 */
export function invokeCodec(modelId: string, stream: boolean, body: Json): Codec {
  const family = familyOf(body);
  const inner = family === "claude" ? anthropic : family === "titan" ? titanText : undefined;
  return {
    decodeRequest(json) {
      if (!inner) return { ...opaque(), model: modelId, stream };
      const { stream: _stream, ...rest } = json;
      return { ...inner.decodeRequest(rest), model: modelId, stream };
    },
    encodeReply: (reply, model) => inner!.encodeReply(reply, model),
    streamEncoder: (model, request) => chunks(inner!.streamEncoder(model, request)),
    // Claude's last chunk is message_stop, whose JSON starts so in base64; other families' last chunks say nothing alike.
    lastEvent: family === "claude" ? "eyJ0eXBlIjoibWVzc2FnZV9zdG9w" : "",
    dialect: "bedrock-invoke",
    writeEvents,
    usageIn: (tail) => (family === "claude" ? anthropic.usageIn?.(decodedChunks(tail)) : undefined),
  };
}

type Family = "claude" | "titan" | "other";

function familyOf(body: Json): Family {
  if (typeof body.anthropic_version === "string") return "claude";
  if (typeof body.inputText === "string") return "titan";
  return "other";
}

/** A body of a family parley cannot convert: it may still go to a Bedrock upstream as sent. */
const opaque = (): ChatRequest => ({
  system: [], messages: [], stream: false, includeUsage: true, fileIds: [],
  needsNative: { field: "body", reason: "This InvokeModel body (not a Claude or Titan Text one) can only go to a Bedrock upstream: use Converse to reach this model." },
});

/** Each of the family's events as a `chunk` event; an error as the stream's exception. */
function chunks(encoder: StreamEncoder): StreamEncoder {
  const wrap = (events: SseEvent[]) => events.map((e): SseEvent => ({ event: "chunk", data: { bytes: Buffer.from(JSON.stringify(e.data)).toString("base64") } }));
  return {
    event: (event) => wrap(encoder.event(event)),
    end: () => wrap(encoder.end().filter((e) => e.data !== "[DONE]")),
    error: (error) => [exceptionEvent(error)],
  };
}

/** The JSON the last chunks of a stream carry (message_delta, message_stop), decoded from their base64, for the family's usage reader. */
function decodedChunks(tail: string): string {
  let text = "";
  for (let n = 0, at = tail.length; n < 2 && (at = tail.lastIndexOf('"bytes":"', at - 1)) >= 0; n++) {
    const start = at + 9;
    const end = tail.indexOf('"', start);
    if (end > start) text = Buffer.from(tail.slice(start, end), "base64").toString() + text;
  }
  return text;
}
