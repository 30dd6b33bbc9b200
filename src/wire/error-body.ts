import { envelope, type ErrorDialect, type GatewayError } from "../errors.ts";
import { anthropicErrorBody } from "./anthropic/errors.ts";
import { errorBody as geminiErrorBody } from "./gemini/errors.ts";
import { OVERFLOW_CODE, openaiErrorBody, overflowMessage } from "./openai-chat/errors.ts";

/** The error body in the caller's dialect (contract 9): each dialect's own in its wire folder, parley's envelope otherwise. */
export function errorBody(error: GatewayError, dialect: ErrorDialect, debug = false): unknown {
  if (dialect === "anthropic") return anthropicErrorBody(error, debug);
  if (dialect === "openai") return openaiErrorBody(error, debug);
  if (dialect === "gemini") return geminiErrorBody(error, debug);
  if (!error.overflow) return envelope(error, debug);
  // A context overflow in parley's envelope: OpenAI's sentence and code, which most clients know.
  return { error: { type: error.type, message: overflowMessage(error.overflow), code: OVERFLOW_CODE, ...(debug && error.upstream ? { details: error.upstream } : {}) } };
}
