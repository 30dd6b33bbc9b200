import { invalidRequest } from "../errors.ts";
import { textOf, type ChatReply, type ChatRequest, type Finish, type Message } from "../ir.ts";
import type { Codec, StreamEncoder } from "./codec.ts";
import { fileIds, isObject, numberIn, optionalBoolean, optionalString, positiveInt, stringList, type Json } from "./read.ts";
import { usageTracker } from "./usage.ts";

/** Amazon Titan Text: the spec's `beta_textgen` format. (The Bedrock InvokeModel body lives with the Bedrock provider.) */

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

function encodeReply(reply: ChatReply) {
  return {
    inputTextTokenCount: reply.usage?.input.total ?? 0,
    results: [{ tokenCount: reply.usage?.output ?? 0, outputText: textOf(reply.content), completionReason: toCompletionReason(reply.finish) }],
  };
}

function streamEncoder(): StreamEncoder {
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

export const titanText: Codec = { decodeRequest, encodeReply, streamEncoder, lastEvent: '"completionReason":"' };
