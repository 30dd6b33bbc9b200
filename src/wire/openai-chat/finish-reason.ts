import { finishFrom } from "../codec.ts";
import type { Finish, FinishReason } from "../../ir.ts";

/** Chat Completions' finish reasons, both ways. */

const FINISH_REASONS: Record<string, FinishReason> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  content_filter: "content_filter",
};

export function fromFinishReason(raw: string | null | undefined): Finish {
  return finishFrom(FINISH_REASONS, raw);
}

export function toFinishReason(finish: Finish): string {
  switch (finish.reason) {
    case "stop":
    case "stop_sequence":
      return "stop";
    case "length":
      return "length";
    case "tool_calls":
      return "tool_calls";
    case "content_filter":
      return "content_filter";
    default:
      return "stop";
  }
}
