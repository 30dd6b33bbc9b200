import { errorBody } from "../../errors.ts";
import type { ChatReply } from "../../ir.ts";
import { decodeRequest } from "./decode-request.ts";
import { encodeReply as encode, type EncodeOptions } from "./reply.ts";
import { streamEncoder as encoder } from "./stream.ts";
import { usageIn } from "./usage.ts";
import type { Codec, StreamEncoder } from "../codec.ts";

/**
 * The Anthropic Messages API as api.anthropic.com serves it (`POST /v1/messages`). To Claude (on
 * Anthropic's API or Bedrock) the client's body goes up natively; this codec is for every other
 * route, through the IR, with the one Anthropic wire module.
 */

/** Thinking blocks kept, the cache's token counts apart, and who called a tool (the model itself: `direct`). */
const options: EncodeOptions = {
  cache: "apart",
  thinking: true,
  caller: { type: "direct" },
  error: (error) => [{ event: "error", data: errorBody(error, "anthropic") }],
};
const encodeReply = (reply: ChatReply, model: string) => encode(reply, model, options);
const streamEncoder = (model: string): StreamEncoder => encoder(model, options);

export const anthropic: Codec = { decodeRequest: (body) => decodeRequest(body), encodeReply, streamEncoder, lastEvent: "message_stop", dialect: "anthropic-messages", usageIn };
