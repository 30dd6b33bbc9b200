import { finishFrom } from "../codec.ts";
import type { Finish, FinishReason } from "../../ir.ts";

/** Titan Text's completion reasons, both ways. */

const COMPLETION_REASONS: Record<string, FinishReason> = {
  FINISH: "stop",
  STOP_CRITERIA_MET: "stop_sequence",
  LENGTH: "length",
  CONTENT_FILTERED: "content_filter",
};

export function fromCompletionReason(raw: string | null | undefined): Finish {
  return finishFrom(COMPLETION_REASONS, raw);
}

export function toCompletionReason(finish: Finish): string {
  switch (finish.reason) {
    case "stop":
    case "tool_calls":
    case "other":
      return "FINISH";
    case "stop_sequence":
      return "STOP_CRITERIA_MET";
    case "length":
      return "LENGTH";
    case "content_filter":
      return "CONTENT_FILTERED";
  }
}
