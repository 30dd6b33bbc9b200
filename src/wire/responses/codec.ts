import { decodeRequest } from "./decode-request.ts";
import { encodeReply } from "./reply.ts";
import { streamEncoder } from "./stream.ts";
import { usageIn } from "./usage.ts";
import type { Codec } from "../codec.ts";

export { droppedTools } from "./decode-request.ts";

/**
 * The OpenAI Responses API (`POST /v1/responses`), stateless. To an OpenAI-compatible upstream the
 * body goes up as sent; this codec is the converted route, with the one Responses wire module.
 */
export const responses: Codec = {
  decodeRequest,
  encodeReply,
  streamEncoder,
  lastEvent: "response.completed",
  endEvents: ["response.completed", "response.incomplete", "response.failed", "error"],
  dialect: "openai-responses",
  usageIn,
};
