import { finishFrom } from "../codec.ts";
import type { Finish, FinishReason } from "../../ir.ts";

/** Gemini's finish reasons, both ways (`Candidate.finishReason`). */

const FINISH_REASONS: Record<string, FinishReason> = {
  STOP: "stop",
  MAX_TOKENS: "length",
  SAFETY: "content_filter",
  RECITATION: "content_filter",
  BLOCKLIST: "content_filter",
  PROHIBITED_CONTENT: "content_filter",
  SPII: "content_filter",
  IMAGE_SAFETY: "content_filter",
  IMAGE_PROHIBITED_CONTENT: "content_filter",
  IMAGE_RECITATION: "content_filter",
  LANGUAGE: "other",
  OTHER: "other",
  MALFORMED_FUNCTION_CALL: "other",
  UNEXPECTED_TOOL_CALL: "other",
  TOO_MANY_TOOL_CALLS: "other",
  MALFORMED_RESPONSE: "other",
  CONTINUATION: "other",
  NO_IMAGE: "other",
  IMAGE_OTHER: "other",
  FINISH_REASON_UNSPECIFIED: "other",
};

/** Gemini says STOP after function calls too: a turn that called tools ends in `tool_calls`. */
export function fromFinishReason(raw: string | null | undefined, calledTools = false): Finish {
  const finish = finishFrom(FINISH_REASONS, raw);
  return calledTools && finish.reason === "stop" ? { reason: "tool_calls", raw: finish.raw } : finish;
}

/** A raw word that is Gemini's own goes back as it came; the others by their meaning. */
export function toFinishReason(finish: Finish): string {
  if (Object.hasOwn(FINISH_REASONS, finish.raw)) return finish.raw;
  switch (finish.reason) {
    case "length":
      return "MAX_TOKENS";
    case "content_filter":
      return "SAFETY";
    default:
      return "STOP";
  }
}
