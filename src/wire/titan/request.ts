import { invalidRequest } from "../../errors.ts";
import { fileIds, isObject, numberIn, optionalBoolean, optionalString, positiveInt, stringList, type Json } from "../../lib/read.ts";
import { systemOnTop, textOf, type ChatRequest, type Message } from "../../ir.ts";
import { refuseUnsupported } from "../cross-family.ts";

/**
 * A Titan Text request (`inputText`, a `User:`/`Bot:` transcript, and `textGenerationConfig`): read
 * from a client (the spec's `beta_textgen` format) into the IR, written from the IR for Bedrock.
 */

const LABEL = /^(User|Bot):[ \t]?/gm;

export function decodeRequest(body: Json): ChatRequest {
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
