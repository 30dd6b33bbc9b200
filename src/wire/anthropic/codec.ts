import type { ChatReply } from "../../ir.ts";
import type { Json } from "../../lib/read.ts";
import type { Codec, StreamEncoder } from "../codec.ts";
import { decodeRequest, type DecodeOptions } from "./decode-request.ts";
import { anthropicErrorBody } from "./errors.ts";
import { encodeReply, type EncodeOptions } from "./reply.ts";
import { streamEncoder } from "./stream.ts";
import { usageIn } from "./usage.ts";

/** The two endpoints that speak Anthropic Messages, each with its own options for the one wire module. */
const codecOf = (decode: DecodeOptions | undefined, encode: EncodeOptions) => ({
  decodeRequest: (body: Json) => decodeRequest(body, decode),
  encodeReply: (reply: ChatReply, model: string) => encodeReply(reply, model, encode),
  streamEncoder: (model: string): StreamEncoder => streamEncoder(model, encode),
  lastEvent: "message_stop",
  failedEvent: "event: error",
});

/**
 * The Anthropic Messages API as api.anthropic.com serves it (`POST /v1/messages`). To Claude (on
 * Anthropic's API or Bedrock) the client's body goes up natively; this codec is for every other
 * route, through the IR. Thinking blocks kept, the cache's token counts apart, and who called a
 * tool (the model itself: `direct`).
 */
export const anthropic: Codec = {
  ...codecOf(undefined, {
    cache: "apart",
    thinking: true,
    caller: { type: "direct" },
    error: (error) => [{ event: "error", data: anthropicErrorBody(error) }],
  }),
  dialect: "anthropic-messages",
  usageIn,
};

/**
 * Anthropic Messages as AWS Bedrock serves it: the spec's `beta_messages` format, with the spec's
 * own rules: `max_tokens` defaults, `file_ids` are taken, and usage counts the input with its cache
 * (contract 2), with no thinking blocks.
 */
export const anthropicMessages: Codec = codecOf(
  { defaultMaxTokens: 4096, files: true, includeUsage: false },
  {
    cache: "included",
    thinking: false,
    // The Anthropic SDK's ToolUseBlock requires it (contract 26): Bedrock's clients parse with the same types.
    caller: { type: "direct" },
    error: (error) => [{ event: "error", data: { type: "error", error: { type: error.type, message: error.message } } }],
  },
);
