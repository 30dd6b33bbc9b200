import { invalidRequest } from "../errors.ts";
import { textOf, type ChatReply, type ChatRequest, type Finish, type FinishReason, type Message } from "../ir.ts";
import { finishFrom, usageTracker, type Codec, type StreamDecoder, type StreamEncoder } from "./codec.ts";
import { fileIds, isObject, numberIn, optionalBoolean, optionalString, positiveInt, stringList, type Json } from "./read.ts";

/** Amazon Titan Text: the spec's `beta_textgen` format, and the body of Bedrock InvokeModel for it. */

const LABEL = /^(User|Bot):[ \t]?/gm;

// ---- client request -> IR ----

function decodeRequest(body: Json): ChatRequest {
  const inputText = body.inputText;
  if (typeof inputText !== "string") throw invalidRequest("Missing required field 'inputText'.", "inputText: required string");
  const config = isObject(body.textGenerationConfig) ? body.textGenerationConfig : {};
  const { system, messages } = parseTranscript(inputText);
  return {
    model: optionalString(body, "model"),
    system,
    messages,
    maxTokens: positiveInt(config, "maxTokenCount"),
    temperature: numberIn(config, "temperature", 0, 1),
    topP: numberIn(config, "topP", 0, 1),
    stop: stringList(config, "stopSequences"),
    stream: optionalBoolean(body, "stream") ?? false,
    includeUsage: false,
    fileIds: fileIds(body),
  };
}

/** `User:`/`Bot:` labels split the text into turns; text before the first label is the system text. */
function parseTranscript(inputText: string): { system: string[]; messages: Message[] } {
  const labels = [...inputText.matchAll(LABEL)];
  if (labels.length === 0) return { system: [], messages: [{ role: "user", content: [{ type: "text", text: inputText }] }] };
  const preamble = inputText.slice(0, labels[0]!.index).trim();
  const messages: Message[] = [];
  labels.forEach((label, i) => {
    const from = label.index! + label[0].length;
    const text = inputText.slice(from, labels[i + 1]?.index ?? inputText.length).trim();
    const last = i === labels.length - 1;
    if (last && label[1] === "Bot" && text === "") return;
    messages.push({ role: label[1] === "User" ? "user" : "assistant", content: [{ type: "text", text }] });
  });
  return { system: preamble ? [preamble] : [], messages };
}

// ---- IR -> client reply ----

function toCompletionReason(finish: Finish): string {
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

const COMPLETION_REASONS: Record<string, FinishReason> = {
  FINISH: "stop",
  STOP_CRITERIA_MET: "stop_sequence",
  LENGTH: "length",
  CONTENT_FILTERED: "content_filter",
};

function fromCompletionReason(raw: string | null | undefined): Finish {
  return finishFrom(COMPLETION_REASONS, raw);
}

function encodeReply(reply: ChatReply) {
  return {
    inputTextTokenCount: reply.usage?.inputTokens ?? 0,
    results: [{ tokenCount: reply.usage?.outputTokens ?? 0, outputText: textOf(reply.content), completionReason: toCompletionReason(reply.finish) }],
  };
}

function streamEncoder(): StreamEncoder {
  const usage = usageTracker();
  let finish: Finish | undefined;
  let first = true;
  /** Input tokens go in the first chunk, as Titan sends them, and again in the last one. */
  const chunk = (outputText: string, completionReason: string | null) => {
    const inputTextTokenCount = first || completionReason ? (usage.inputTokens ?? null) : null;
    first = false;
    return { data: { outputText, index: 0, totalOutputTextTokenCount: usage.outputTokens ?? null, completionReason, inputTextTokenCount } };
  };
  return {
    event(event) {
      switch (event.type) {
        case "start":
          usage.add(event);
          return [];
        case "text":
          return [chunk(event.text, null)];
        case "finish":
          finish = event.finish;
          return [];
        case "usage":
          usage.add(event);
          return [];
        default:
          return [];
      }
    },
    error: (error) => [{ data: { error: { type: error.type, message: error.message } } }],
    end: () => [chunk("", toCompletionReason(finish ?? { reason: "stop", raw: "" }))],
  };
}

export const titanText: Codec = { decodeRequest, encodeReply, streamEncoder };

// ---- IR -> Bedrock InvokeModel body for amazon.titan-text-*, and its answers -> IR ----

export function encodeRequest(request: ChatRequest): Json {
  if (request.tools?.length) throw invalidRequest("Titan Text models do not support tools.");
  const turns = request.messages.map((m) => {
    if (m.content.some((p) => p.type !== "text")) throw invalidRequest("Titan Text models take text only: no images, tool calls or tool results.");
    return `${m.role === "user" ? "User" : "Bot"}: ${textOf(m.content)}`;
  });
  const system = request.system.join("\n\n");
  const inputText = `${system ? `${system}\n\n` : ""}${turns.join("\n")}\nBot:`;
  const config: Json = {
    ...(request.maxTokens !== undefined ? { maxTokenCount: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: Math.min(request.temperature, 1) } : {}),
    ...(request.topP !== undefined ? { topP: request.topP } : {}),
    ...(request.stop?.length ? { stopSequences: request.stop } : {}),
  };
  return { inputText, textGenerationConfig: config };
}

interface UpstreamReply {
  inputTextTokenCount?: number;
  results?: { tokenCount?: number; outputText?: string; completionReason?: string }[];
}

export function decodeReply(body: UpstreamReply): ChatReply {
  const result = body.results?.[0];
  return {
    content: [{ type: "text", text: result?.outputText ?? "" }],
    finish: fromCompletionReason(result?.completionReason),
    usage: { inputTokens: body.inputTextTokenCount ?? 0, outputTokens: result?.tokenCount ?? 0 },
  };
}

interface UpstreamChunk {
  outputText?: string;
  totalOutputTextTokenCount?: number | null;
  completionReason?: string | null;
  inputTextTokenCount?: number | null;
  "amazon-bedrock-invocationMetrics"?: { inputTokenCount?: number; outputTokenCount?: number };
}

export function streamDecoder(): StreamDecoder<UpstreamChunk> {
  let started = false;
  return (chunk) => {
    const events: ReturnType<StreamDecoder<UpstreamChunk>> = [];
    if (!started) {
      started = true;
      events.push({ type: "start", inputTokens: chunk.inputTextTokenCount ?? undefined });
    }
    if (chunk.outputText) events.push({ type: "text", text: chunk.outputText });
    if (chunk.completionReason) {
      const metrics = chunk["amazon-bedrock-invocationMetrics"];
      events.push({ type: "finish", finish: fromCompletionReason(chunk.completionReason) });
      events.push({
        type: "usage",
        inputTokens: metrics?.inputTokenCount ?? chunk.inputTextTokenCount ?? undefined,
        outputTokens: metrics?.outputTokenCount ?? chunk.totalOutputTextTokenCount ?? undefined,
      });
    }
    return events;
  };
}
