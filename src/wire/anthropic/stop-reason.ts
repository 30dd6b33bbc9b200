import { finishFrom } from "../codec.ts";
import type { Finish, FinishReason } from "../../ir.ts";

/** Anthropic's stop reasons (Converse uses the same words, and Bedrock's guardrail ones). */
const STOP_REASONS: Record<string, FinishReason> = {
  end_turn: "stop",
  pause_turn: "stop",
  stop_sequence: "stop_sequence",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
  guardrail_intervened: "content_filter",
  content_filtered: "content_filter",
};

export function fromStopReason(raw: string | null | undefined, stopSequence?: string | null): Finish {
  return { ...finishFrom(STOP_REASONS, raw), ...(stopSequence ? { stopSequence } : {}) };
}

export function toStopReason(finish: Finish): string {
  switch (finish.reason) {
    case "stop":
    case "other":
      return "end_turn";
    case "stop_sequence":
      return "stop_sequence";
    case "length":
      return "max_tokens";
    case "tool_calls":
      return "tool_use";
    case "content_filter":
      return "refusal";
  }
}
