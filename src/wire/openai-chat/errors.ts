import type { ContextOverflow, GatewayError } from "../../errors.ts";

/** OpenAI's `type` and `code` as api.openai.com sends them: every 4xx an `invalid_request_error`, 5xx a `server_error`. */
function openaiType(error: GatewayError): { type: string; code: string | null } {
  if (error.status === 401) return { type: "invalid_request_error", code: "invalid_api_key" };
  if (error.status === 429) return { type: "requests", code: "rate_limit_exceeded" };
  if (error.status >= 500) return { type: "server_error", code: null };
  return { type: "invalid_request_error", code: null };
}

/** A context overflow in the sentence OpenAI's clients act on (with the code `context_length_exceeded`). */
export function overflowMessage({ limit, tokens }: ContextOverflow): string {
  return limit !== undefined && tokens !== undefined
    ? `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`
    : `Your input exceeds the context window of this model${limit === undefined ? "" : ` (${limit} tokens)`}. Please reduce the length of the messages.`;
}

export const OVERFLOW_CODE = "context_length_exceeded";

/** OpenAI's error body: the rule that failed goes in the message, its field in `param` (OpenAI's clients show only the message). */
export function openaiErrorBody(error: GatewayError, debug = false) {
  if (error.overflow) return { error: { message: overflowMessage(error.overflow), type: "invalid_request_error", param: null, code: OVERFLOW_CODE } };
  const details = debug && error.upstream ? error.upstream : error.details;
  const param = /^([\w.[\]]+):/.exec(error.details ?? "")?.[1] ?? null;
  const { type, code } = openaiType(error);
  return { error: { message: details ? `${error.message} (${details})` : error.message, type, param, code } };
}
