import { validationError } from "../errors.ts";
import type { ChatReply, ChatRequest, Finish, Message, Part, SseEvent, Tool, ToolChoice } from "../ir.ts";
import { randomId, usageTracker, type Codec, type StreamEncoder } from "./codec.ts";
import {
  fileIds, isObject, messageList, numberIn, objectList, optionalBoolean, optionalString, parseArguments, positiveInt, stringList,
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
    if (m.role === "system") return void system.push(blocksText(m.content, at));
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

function toStopReason(finish: Finish): string {
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

const messageId = (id?: string) => (id?.startsWith("msg_") ? id : randomId("msg_"));

function encodeContent(parts: Part[]): Json[] {
  return parts.flatMap((p): Json[] => {
    if (p.type === "text") return p.text ? [{ type: "text", text: p.text }] : [];
    if (p.type === "tool_call") return [{ type: "tool_use", id: p.id, name: p.name, input: parseArguments(p.arguments, "the reply") }];
    return [];
  });
}

function encodeReply(reply: ChatReply, model: string) {
  return {
    id: messageId(reply.id),
    type: "message",
    role: "assistant",
    model,
    content: encodeContent(reply.content),
    stop_reason: toStopReason(reply.finish),
    stop_sequence: reply.finish.stopSequence ?? null,
    usage: { input_tokens: reply.usage?.inputTokens ?? 0, output_tokens: reply.usage?.outputTokens ?? 0 },
  };
}

function streamEncoder(model: string): StreamEncoder {
  const id = randomId("msg_");
  let started = false;
  let nextBlock = 0;
  let open: { kind: "text" | "tool"; index: number } | undefined;
  const toolBlocks = new Map<number, number>();
  let finish: Finish | undefined;
  const usage = usageTracker();

  const sse = (event: string, data: Json): SseEvent => ({ event, data: { type: event, ...data } });
  const start = (inputTokens = 0): SseEvent[] => {
    if (started) return [];
    started = true;
    const message = { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: inputTokens, output_tokens: 0 } };
    return [sse("message_start", { message })];
  };
  const close = (): SseEvent[] => {
    if (!open) return [];
    const index = open.index;
    open = undefined;
    return [sse("content_block_stop", { index })];
  };
  const openBlock = (kind: "text" | "tool", block: Json): SseEvent[] => {
    const events = close();
    open = { kind, index: nextBlock++ };
    return [...events, sse("content_block_start", { index: open.index, content_block: block })];
  };

  return {
    event(event) {
      switch (event.type) {
        case "start":
          usage.add(event);
          return start(event.inputTokens);
        case "text": {
          const head = [...start(), ...(open?.kind === "text" ? [] : openBlock("text", { type: "text", text: "" }))];
          return [...head, sse("content_block_delta", { index: open!.index, delta: { type: "text_delta", text: event.text } })];
        }
        case "tool_call": {
          const head = [...start(), ...openBlock("tool", { type: "tool_use", id: event.id, name: event.name, input: {} })];
          toolBlocks.set(event.index, open!.index);
          return head;
        }
        case "tool_args": {
          const index = toolBlocks.get(event.index);
          if (index === undefined) return [];
          return [sse("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: event.text } })];
        }
        case "finish":
          finish = event.finish;
          return [...start(), ...close()];
        case "usage":
          usage.add(event);
          return [];
        case "reasoning":
          // This format has no place for reasoning text.
          return [];
      }
    },
    error: (error) => [{ event: "error", data: { type: "error", error: { type: error.type, message: error.message } } }],
    end() {
      const stop = finish ?? { reason: "stop", raw: "" };
      return [
        ...start(),
        ...close(),
        sse("message_delta", {
          delta: { stop_reason: toStopReason(stop), stop_sequence: stop.stopSequence ?? null },
          usage: { output_tokens: usage.outputTokens ?? 0, ...(usage.inputTokens !== undefined ? { input_tokens: usage.inputTokens } : {}) },
        }),
        sse("message_stop", {}),
      ];
    },
  };
}

export const anthropicMessages: Codec = { decodeRequest, encodeReply, streamEncoder, lastEvent: "message_stop" };
