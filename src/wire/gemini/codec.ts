import type { ChatReply } from "../../ir.ts";
import type { Json } from "../../lib/read.ts";
import type { Codec } from "../codec.ts";
import { decodeRequest } from "./decode-request.ts";
import { encodeReply } from "./reply.ts";
import { streamEncoder } from "./stream.ts";
import { usageIn } from "./usage.ts";

/**
 * The Gemini API as generativelanguage.googleapis.com serves it (`models/{m}:generateContent`,
 * `:streamGenerateContent?alt=sse`), for Gemini's clients (Gemini CLI, the `@google/genai` SDK).
 * The model and whether to stream are in the URL, not the body: the edge gives them to
 * `decodeRequest` itself, or decodes with `geminiRequest`.
 */
export const gemini: Codec = {
  decodeRequest: (body: Json) => decodeRequest(body),
  encodeReply: (reply: ChatReply, model: string) => encodeReply(reply, model),
  streamEncoder: (model) => streamEncoder(model),
  // Gemini's stream has no closing event: its last chunk is the one with the finish reason.
  lastEvent: '"finishReason"',
  dialect: "gemini",
  usageIn,
};

/** The codec for one request, whose URL names the model and whether it streams. */
export const geminiFor = (model: string, stream: boolean): Codec => ({
  ...gemini,
  decodeRequest: (body: Json) => decodeRequest(body, model, stream),
  named: { model, stream },
});

export { decodeRequest as geminiRequest };
