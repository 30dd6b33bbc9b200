import type { ChatReply } from "../../ir.ts";
import { decodeRequest, type DecodeOptions } from "./decode-request.ts";
import { encodeReply as encode, type EncodeOptions } from "./reply.ts";
import { streamEncoder as encoder } from "./stream.ts";
import type { Codec, StreamEncoder } from "../codec.ts";

/**
 * Anthropic Messages as AWS Bedrock serves it: the spec's `beta_messages` format, read and written
 * by the one Anthropic wire module, with the spec's own rules: `max_tokens` defaults, `file_ids`
 * are taken, and usage counts the input with its cache (contract 2), with no thinking blocks.
 */

const DECODE: DecodeOptions = { defaultMaxTokens: 4096, files: true, includeUsage: false };
const ENCODE: EncodeOptions = {
  cache: "included",
  thinking: false,
  error: (error) => [{ event: "error", data: { type: "error", error: { type: error.type, message: error.message } } }],
};
const encodeReply = (reply: ChatReply, model: string) => encode(reply, model, ENCODE);
const streamEncoder = (model: string): StreamEncoder => encoder(model, ENCODE);

export const anthropicMessages: Codec = { decodeRequest: (body) => decodeRequest(body, DECODE), encodeReply, streamEncoder, lastEvent: "message_stop" };
