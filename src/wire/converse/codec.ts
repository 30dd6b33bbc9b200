import type { Codec } from "../codec.ts";
import { writeEvents } from "../event-stream/write.ts";
import { converseStream, decodeConverseRequest, encodeConverseReply, usageIn } from "./client.ts";

/** Bedrock's Converse API as a client dialect: the wire module's decoder and encoders, written as event-stream frames. */
export function converseCodec(modelId: string, stream: boolean): Codec {
  return {
    decodeRequest: (body) => ({ ...decodeConverseRequest(body), model: modelId, stream }),
    encodeReply: encodeConverseReply,
    streamEncoder: converseStream,
    // A ConverseStream ends with its metadata event: a passed-through stream is complete once the
    // frame naming it (`:event-type`, a string of 8 bytes) has come.
    lastEvent: "\u0007\u0000\u0008metadata",
    dialect: "bedrock-converse",
    writeEvents,
    usageIn,
  };
}
