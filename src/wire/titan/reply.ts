import { isObject, numberOr, stringOr } from "../../lib/read.ts";
import { textOf, type ChatReply } from "../../ir.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";
import { fromCompletionReason, toCompletionReason } from "./completion-reason.ts";

/** A whole Titan Text reply: read from Bedrock into the IR, written from the IR for a client. */

/** A whole reply -> IR; no `results[0].outputText` is the upstream failing. */
export function decodeReply(body: unknown, up: Upstream): ChatReply {
  const result = isObject(body) && Array.isArray(body.results) ? body.results[0] : undefined;
  if (!isObject(body) || !isObject(result) || typeof result.outputText !== "string") throw badShape(up, "no results[0].outputText", JSON.stringify(body));
  return {
    content: [{ type: "text", text: result.outputText }],
    finish: fromCompletionReason(stringOr(result.completionReason)),
    usage: { input: titanInput(numberOr(body.inputTextTokenCount) ?? 0), output: numberOr(result.tokenCount) ?? 0 },
  };
}

export function encodeReply(reply: ChatReply) {
  return {
    inputTextTokenCount: reply.usage?.input.total ?? 0,
    results: [{ tokenCount: reply.usage?.output ?? 0, outputText: textOf(reply.content), completionReason: toCompletionReason(reply.finish) }],
  };
}

/** Titan has no prompt cache: every input token is the total. */
export const titanInput = (total: number) => ({ total, cacheRead: 0, cacheWrite: 0 });
