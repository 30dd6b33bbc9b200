import { validationError } from "../errors.ts";
import { pushSystem, type ChatReply, type ChatRequest, type Message, type Part, type Tool, type ToolChoice } from "../ir.ts";
import { anthropicReply, anthropicStream, type AnthropicDialect } from "./anthropic-reply.ts";
import type { Codec, StreamEncoder } from "./codec.ts";
import {
  asksThinking, fileIds, isObject, messageList, numberIn, objectList, optionalBoolean, optionalString, positiveInt, stringList,
  type Json,
} from "./read.ts";

/**
 * Anthropic Messages as AWS Bedrock serves it: the spec's `beta_messages` format. (The Bedrock
 * InvokeModel body for `anthropic.*` models lives with the Bedrock provider.)
 */

const DEFAULT_MAX_TOKENS = 4096;

// ---- client request -> IR ----

function decodeRequest(body: Json): ChatRequest {
  const system = decodeSystem(body.system);
  const messages: Message[] = [];
  messageList(body).forEach((m, i) => {
    const at = `messages[${i}]`;
    if (m.role === "system") return pushSystem(system, messages, [blocksText(m.content, at)]);
    if (m.role !== "user" && m.role !== "assistant") throw validationError(`${at}.role`, "must be user or assistant");
    messages.push({ role: m.role, content: decodeBlocks(m.content, at) });
  });
  return {
    model: optionalString(body, "model"),
    system,
    messages,
    maxTokens: positiveInt(body, "max_tokens") ?? DEFAULT_MAX_TOKENS,
    temperature: numberIn(body, "temperature", 0, 1),
    topP: numberIn(body, "top_p", 0, 1),
    topK: positiveInt(body, "top_k"),
    stop: stringList(body, "stop_sequences"),
    tools: decodeTools(body),
    toolChoice: decodeToolChoice(body.tool_choice),
    stream: optionalBoolean(body, "stream") ?? false,
    includeUsage: false,
    fileIds: fileIds(body),

    ...(asksThinking(body) ? { thinking: true } : {}),
  };
}

function decodeSystem(system: unknown): string[] {
  if (system === undefined || system === null || system === "") return [];
  if (typeof system === "string") return [system];
  return [blocksText(system, "system")];
}

function blocksText(content: unknown, at: string): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw validationError(at, "must be a string or an array of text blocks");
  return content.map((b) => (isObject(b) && typeof b.text === "string" ? b.text : "")).join("");
}

function decodeBlocks(content: unknown, at: string): Part[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw validationError(`${at}.content`, "must be a string or an array of content blocks");
  return content.map((block, j) => decodeBlock(block, `${at}.content[${j}]`));
}

function decodeBlock(block: unknown, at: string): Part {
  if (!isObject(block)) throw validationError(at, "must be a content block object");
  switch (block.type) {
    case "text":
      if (typeof block.text !== "string") throw validationError(`${at}.text`, "must be a string");
      return { type: "text", text: block.text };
    case "image": {
      const source = isObject(block.source) ? block.source : {};
      if (source.type === "base64" && typeof source.media_type === "string" && typeof source.data === "string") {
        return { type: "image", mediaType: source.media_type, data: source.data };
      }
      if (source.type === "url" && typeof source.url === "string") return { type: "image_url", url: source.url };
      throw validationError(`${at}.source`, "must be {type: base64, media_type, data} or {type: url, url}");
    }
    case "tool_use":
      if (typeof block.id !== "string" || typeof block.name !== "string") throw validationError(at, "tool_use needs an id and a name");
      return { type: "tool_call", id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) };
    case "tool_result":
      if (typeof block.tool_use_id !== "string") throw validationError(`${at}.tool_use_id`, "is required");
      return {
        type: "tool_result",
        toolCallId: block.tool_use_id,
        content: block.content === undefined ? "" : blocksText(block.content, `${at}.content`),
        ...(block.is_error === true ? { isError: true } : {}),
      };
    default:
      throw validationError(`${at}.type`, "must be text, image, tool_use or tool_result");
  }
}

function decodeTools(body: Json): Tool[] | undefined {
  return objectList(body, "tools")?.map((tool, i) => {
    if (typeof tool.name !== "string") throw validationError(`tools[${i}].name`, "is required");
    return {
      name: tool.name,
      description: typeof tool.description === "string" ? tool.description : undefined,
      parameters: isObject(tool.input_schema) ? tool.input_schema : { type: "object", properties: {} },
    };
  });
}

function decodeToolChoice(value: unknown): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (isObject(value)) {
    if (value.type === "auto" || value.type === "none") return { type: value.type };
    if (value.type === "any") return { type: "required" };
    if (value.type === "tool" && typeof value.name === "string") return { type: "tool", name: value.name };
  }
  throw validationError("tool_choice", "must be {type: auto|any|none} or {type: tool, name}");
}

// ---- IR -> client reply ----

/** As Bedrock serves it: no thinking blocks; input (the cache included, as `prompt_tokens` counts it: contract 2) and output tokens only. */
const dialect: AnthropicDialect = {
  usage: (usage, at) =>
    at === "end"
      ? { output_tokens: usage?.output ?? 0, ...(usage?.input ? { input_tokens: usage.input.total } : {}) }
      : { input_tokens: usage?.input?.total ?? 0, output_tokens: at === "start" ? 0 : (usage?.output ?? 0) },
  thinking: false,
  error: (error) => [{ event: "error", data: { type: "error", error: { type: error.type, message: error.message } } }],
};
const encodeReply = (reply: ChatReply, model: string) => anthropicReply(reply, model, dialect);
const streamEncoder = (model: string): StreamEncoder => anthropicStream(model, dialect);

export const anthropicMessages: Codec = { decodeRequest, encodeReply, streamEncoder, lastEvent: "message_stop" };
