import { invalidRequest } from "../../errors.ts";
import { finishFrom, type StreamDecoder } from "../../formats/codec.ts";
import { isObject, numberOr, stringOr, type Json } from "../../formats/read.ts";
import { systemOnTop, textOf, type ChatReply, type ChatRequest, type Finish, type FinishReason, type StreamEvent } from "../../ir.ts";
import { refuseUnsupported } from "../cross-family.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";

/** The Bedrock InvokeModel body for `amazon.titan-text-*` models, and its answers -> IR. */

const COMPLETION_REASONS: Record<string, FinishReason> = {
  FINISH: "stop",
  STOP_CRITERIA_MET: "stop_sequence",
  LENGTH: "length",
  CONTENT_FILTERED: "content_filter",
};

function fromCompletionReason(raw: string | null | undefined): Finish {
  return finishFrom(COMPLETION_REASONS, raw);
}

export function encodeRequest(request: ChatRequest): Json {
  refuseUnsupported(request, "Titan Text");
  if (request.responseFormat) throw invalidRequest("Titan Text models do not support response_format.", "response_format: unsupported by the model");
  if (request.tools?.length) throw invalidRequest("Titan Text models do not support tools.");
  const { system, messages } = systemOnTop(request);
  const turns = messages.map((m) => {
    if (m.content.some((p) => p.type !== "text")) throw invalidRequest("Titan Text models take text only: no images, tool calls or tool results.");
    return `${m.role === "user" ? "User" : "Bot"}: ${textOf(m.content)}`;
  });
  const inputText = `${system.length ? `${system.join("\n\n")}\n\n` : ""}${turns.join("\n")}\nBot:`;
  const config: Json = {
    ...(request.maxTokens !== undefined ? { maxTokenCount: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: Math.min(request.temperature, 1) } : {}),
    ...(request.topP !== undefined ? { topP: request.topP } : {}),
    ...(request.stop?.length ? { stopSequences: request.stop } : {}),
  };
  return { inputText, textGenerationConfig: config };
}

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

/** Titan has no prompt cache: every input token is the total. */
const titanInput = (total: number) => ({ total, cacheRead: 0, cacheWrite: 0 });
