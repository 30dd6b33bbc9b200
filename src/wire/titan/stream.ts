import type { StreamDecoder, StreamEncoder } from "../codec.ts";
import { isObject, numberOr, stringOr } from "../../lib/read.ts";
import { usageTracker } from "../usage.ts";
import type { Finish, StreamEvent } from "../../ir.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";
import { fromCompletionReason, toCompletionReason } from "./completion-reason.ts";
import { titanInput } from "./reply.ts";

/** Titan Text's stream: chunks from Bedrock into IR events, IR events into chunks for a client. */

export function streamDecoder(up: Upstream): StreamDecoder<unknown> {
  let started = false;
  return (chunk) => {
    if (!isObject(chunk)) throw badShape(up, "a stream chunk that is not an object", JSON.stringify(chunk));
    const events: StreamEvent[] = [];
    if (!started) {
      started = true;
      const input = numberOr(chunk.inputTextTokenCount);
      events.push({ type: "start", ...(input !== undefined ? { usage: { input: titanInput(input) } } : {}) });
    }
    if (typeof chunk.outputText === "string" && chunk.outputText) events.push({ type: "text", text: chunk.outputText });
    const reason = stringOr(chunk.completionReason);
    if (reason) {
      const metrics = isObject(chunk["amazon-bedrock-invocationMetrics"]) ? chunk["amazon-bedrock-invocationMetrics"] : {};
      events.push({ type: "finish", finish: fromCompletionReason(reason) });
      const input = numberOr(metrics.inputTokenCount) ?? numberOr(chunk.inputTextTokenCount);
      const output = numberOr(metrics.outputTokenCount) ?? numberOr(chunk.totalOutputTextTokenCount);
      events.push({ type: "usage", usage: { ...(input !== undefined ? { input: titanInput(input) } : {}), ...(output !== undefined ? { output } : {}) } });
    }
    return events;
  };
}

export function streamEncoder(): StreamEncoder {
  const { reported, add } = usageTracker();
  let finish: Finish | undefined;
  let first = true;
  /** Input tokens go in the first chunk, as Titan sends them, and again in the last one. */
  const chunk = (outputText: string, completionReason: string | null) => {
    const inputTextTokenCount = first || completionReason ? (reported.input?.total ?? null) : null;
    first = false;
    return { data: { outputText, index: 0, totalOutputTextTokenCount: reported.output ?? null, completionReason, inputTextTokenCount } };
  };
  return {
    event(event) {
      switch (event.type) {
        case "start":
          add(event.usage);
          return [];
        case "text":
          return [chunk(event.text, null)];
        case "finish":
          finish = event.finish;
          return [];
        case "usage":
          add(event.usage);
          return [];
        default:
          return [];
      }
    },
    error: (error) => [{ data: { error: { type: error.type, message: error.message } } }],
    end: () => [chunk("", toCompletionReason(finish ?? { reason: "stop", raw: "" }))],
  };
}
