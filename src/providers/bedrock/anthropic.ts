import { GatewayError, invalidRequest } from "../../errors.ts";
import { finishFrom, type StreamDecoder } from "../../formats/codec.ts";
import { isObject, numberOr, parseArguments, stringOr, type Json } from "../../formats/read.ts";
import type { ChatReply, ChatRequest, Finish, FinishReason, Part, StreamEvent, ToolChoice } from "../../ir.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";

/** The Bedrock InvokeModel body for `anthropic.*` models (Anthropic Messages), and its answers -> IR. */

const BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31";
const DEFAULT_MAX_TOKENS = 4096;

const STOP_REASONS: Record<string, FinishReason> = {
  end_turn: "stop",
  pause_turn: "stop",
  stop_sequence: "stop_sequence",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
  guardrail_intervened: "content_filter",
  content_filtered: "content_filter",
};

export function fromStopReason(raw: string | null | undefined, stopSequence?: string | null): Finish {
  return { ...finishFrom(STOP_REASONS, raw), ...(stopSequence ? { stopSequence } : {}) };
}

export function encodeRequest(request: ChatRequest): Json {
  // tool_choice none keeps the tools: a history holding tool_use blocks needs their definitions.
  const tools = request.tools;
  return {
    anthropic_version: BEDROCK_ANTHROPIC_VERSION,
    max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
    ...(request.system.length ? { system: request.system.join("\n\n") } : {}),
    messages: request.messages.map((m) => ({ role: m.role, content: m.content.map(encodeBlock) })),
    ...(request.temperature !== undefined ? { temperature: Math.min(request.temperature, 1) } : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
    ...(request.topK !== undefined ? { top_k: request.topK } : {}),
    ...(request.stop?.length ? { stop_sequences: request.stop } : {}),
    ...(tools?.length ? { tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })) } : {}),
    ...(tools?.length && request.toolChoice ? { tool_choice: encodeToolChoice(request.toolChoice) } : {}),
  };
}

function encodeBlock(part: Part): Json {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "image":
      return { type: "image", source: { type: "base64", media_type: part.mediaType, data: part.data } };
    case "image_url":
      throw invalidRequest("Remote image URLs cannot be sent to Bedrock: send the image inline as a base64 data URL.");
    case "tool_call":
      return { type: "tool_use", id: part.id, name: part.name, input: parseArguments(part.arguments, `tool call ${part.id}`) };
    case "tool_result":
      return { type: "tool_result", tool_use_id: part.toolCallId, content: part.content, ...(part.isError ? { is_error: true } : {}) };
  }
}

function encodeToolChoice(choice: ToolChoice): Json {
  switch (choice.type) {
    case "required":
      return { type: "any" };
    case "tool":
      return { type: "tool", name: choice.name };
    default:
      return { type: choice.type };
  }
}

/** A whole reply -> IR; a reply that is not a message, or a block missing what it needs, is the upstream failing. */
export function decodeReply(body: unknown, up: Upstream): ChatReply {
  const bad = (what: string) => badShape(up, what, JSON.stringify(body));
  if (!isObject(body) || !Array.isArray(body.content)) throw bad("no content list in the message");
  const content = body.content.flatMap((block): Part[] => {
    if (!isObject(block)) throw bad("a content block that is not an object");
    if (block.type === "text") {
      if (typeof block.text !== "string") throw bad("a text block without text");
      return [{ type: "text", text: block.text }];
    }
    if (block.type === "tool_use") {
      if (typeof block.id !== "string" || typeof block.name !== "string" || !block.name) throw bad("a tool_use block without an id or a name");
      return [{ type: "tool_call", id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) }];
    }
    return [];
  });
  const usage = isObject(body.usage) ? body.usage : undefined;
  return {
    id: typeof body.id === "string" ? body.id : undefined,
    content,
    finish: fromStopReason(stringOr(body.stop_reason), stringOr(body.stop_sequence)),
    usage: usage ? { inputTokens: count(usage.input_tokens), outputTokens: count(usage.output_tokens) } : undefined,
  };
}

/** Anthropic stream events (as Bedrock wraps them in chunks) -> IR events. */
export function streamDecoder(up: Upstream): StreamDecoder<unknown> {
  const tools = new Map<unknown, number>();
  return (event): StreamEvent[] => {
    if (!isObject(event)) throw badShape(up, "a stream event that is not an object", JSON.stringify(event));
    switch (event.type) {
      case "message_start": {
        const message = isObject(event.message) ? event.message : {};
        const usage = isObject(message.usage) ? message.usage : {};
        return [{ type: "start", id: stringOr(message.id), inputTokens: numberOr(usage.input_tokens) }];
      }
      case "content_block_start": {
        const block = isObject(event.content_block) ? event.content_block : {};
        if (block.type === "tool_use") {
          if (typeof block.name !== "string" || !block.name) throw badShape(up, "a streamed tool_use block without a name", JSON.stringify(event));
          const index = tools.size;
          tools.set(event.index, index);
          return [{ type: "tool_call", index, id: String(block.id ?? ""), name: block.name }];
        }
        return block.type === "text" && typeof block.text === "string" && block.text ? [{ type: "text", text: block.text }] : [];
      }
      case "content_block_delta": {
        const delta = isObject(event.delta) ? event.delta : {};
        if (delta.type === "text_delta" && typeof delta.text === "string") return [{ type: "text", text: delta.text }];
        const tool = tools.get(event.index);
        if (delta.type === "input_json_delta" && tool !== undefined && typeof delta.partial_json === "string") {
          return [{ type: "tool_args", index: tool, text: delta.partial_json }];
        }
        return [];
      }
      case "message_delta": {
        const delta = isObject(event.delta) ? event.delta : {};
        const usage = isObject(event.usage) ? event.usage : {};
        const stop = stringOr(delta.stop_reason);
        const output = numberOr(usage.output_tokens);
        return [
          ...(stop ? [{ type: "finish" as const, finish: fromStopReason(stop, stringOr(delta.stop_sequence)) }] : []),
          ...(output !== undefined ? [{ type: "usage" as const, outputTokens: output }] : []),
        ];
      }
      case "error": {
        const error = isObject(event.error) ? event.error : {};
        throw new GatewayError(503, "service_unavailable_error", `${up.label} failed in the middle of its reply.`, { upstream: String(error.message ?? "") });
      }
      default:
        return [];
    }
  };
}

const count = (value: unknown) => numberOr(value) ?? 0;
