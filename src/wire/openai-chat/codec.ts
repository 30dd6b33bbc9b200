import { decodeRequest } from "./decode-request.ts";
import { encodeReply } from "./reply.ts";
import { streamEncoder } from "./stream.ts";
import { usageIn } from "./usage.ts";
import type { Codec } from "../codec.ts";

/** OpenAI Chat Completions: the spec's `alpha` format, read and written by the one Chat Completions wire module. */
export const openaiChat: Codec = { decodeRequest, encodeReply, streamEncoder, lastEvent: "[DONE]", dialect: "openai-chat", usageIn };
