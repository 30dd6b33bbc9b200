import { decodeRequest } from "../wire/openai-chat/decode-request.ts";
import { encodeReply } from "../wire/openai-chat/reply.ts";
import { streamEncoder } from "../wire/openai-chat/stream.ts";
import { usageIn } from "../wire/openai-chat/usage.ts";
import type { Codec } from "./codec.ts";

/** OpenAI Chat Completions: the spec's `alpha` format, read and written by the one Chat Completions wire module. */
export const openaiChat: Codec = { decodeRequest, encodeReply, streamEncoder, lastEvent: "[DONE]", dialect: "openai-chat", usageIn };
