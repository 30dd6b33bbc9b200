import { invalidRequest } from "../errors.ts";
import { fromStopReason } from "../formats/anthropic-messages.ts";
import type { StreamDecoder } from "../formats/codec.ts";
import { parseArguments, type Json } from "../formats/read.ts";
import type { ChatReply, ChatRequest, Part, StreamEvent } from "../ir.ts";

/** The Bedrock Converse API: used for every Bedrock family without a native codec here. */

/** The request body; the model id goes in the path. */
export function encodeConverse(request: ChatRequest): Json {
  const tools = request.toolChoice?.type === "none" ? undefined : request.tools;
  return {
    messages: request.messages.map((m) => ({ role: m.role, content: m.content.map(encodePart) })),
    ...(request.system.length ? { system: request.system.map((text) => ({ text })) } : {}),
    inferenceConfig: {
      ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
      ...(request.temperature !== undefined ? { temperature: Math.min(request.temperature, 1) } : {}),
      ...(request.topP !== undefined ? { topP: request.topP } : {}),
      ...(request.stop?.length ? { stopSequences: request.stop } : {}),
    },
    ...(tools?.length
      ? {
          toolConfig: {
            tools: tools.map((t) => ({ toolSpec: { name: t.name, description: t.description, inputSchema: { json: t.parameters } } })),
            ...(request.toolChoice?.type === "required" ? { toolChoice: { any: {} } } : {}),
            ...(request.toolChoice?.type === "tool" ? { toolChoice: { tool: { name: request.toolChoice.name } } } : {}),
          },
        }
      : {}),
  };
}

function encodePart(part: Part): Json {
  switch (part.type) {
    case "text":
      return { text: part.text };
    case "image":
      return { image: { format: part.mediaType.replace(/^image\//, "").replace("jpg", "jpeg"), source: { bytes: part.data } } };
    case "image_url":
      throw invalidRequest("Remote image URLs cannot be sent to Bedrock: send the image inline as a base64 data URL.");
    case "tool_call":
      return { toolUse: { toolUseId: part.id, name: part.name, input: parseArguments(part.arguments, `tool call ${part.id}`) } };
    case "tool_result":
      return { toolResult: { toolUseId: part.toolCallId, content: [{ text: part.content }], ...(part.isError ? { status: "error" } : {}) } };
  }
}

interface ConverseOutput {
  output?: { message?: { content?: { text?: string; toolUse?: { toolUseId?: string; name?: string; input?: unknown } }[] } };
  stopReason?: string;
  usage?: { inputTokens?: number; outputTokens?: number };
}

export function decodeConverse(out: ConverseOutput): ChatReply {
  const content = (out.output?.message?.content ?? []).flatMap((block): Part[] => {
    if (block.text !== undefined) return [{ type: "text", text: block.text }];
    if (block.toolUse) return [{ type: "tool_call", id: block.toolUse.toolUseId ?? "", name: block.toolUse.name ?? "", arguments: JSON.stringify(block.toolUse.input ?? {}) }];
    return [];
  });
  return {
    content,
    finish: fromStopReason(out.stopReason),
    usage: out.usage ? { inputTokens: out.usage.inputTokens ?? 0, outputTokens: out.usage.outputTokens ?? 0 } : undefined,
  };
}

interface ConverseStreamEvent {
  messageStart?: unknown;
  contentBlockStart?: { contentBlockIndex?: number; start?: { toolUse?: { toolUseId?: string; name?: string } } };
  contentBlockDelta?: { contentBlockIndex?: number; delta?: { text?: string; toolUse?: { input?: string } } };
  messageStop?: { stopReason?: string };
  metadata?: { usage?: { inputTokens?: number; outputTokens?: number } };
}

export function converseStreamDecoder(): StreamDecoder<ConverseStreamEvent> {
  const tools = new Map<number, number>();
  return (event): StreamEvent[] => {
    if (event.messageStart) return [{ type: "start" }];
    const toolUse = event.contentBlockStart?.start?.toolUse;
    if (toolUse) {
      const index = tools.size;
      tools.set(event.contentBlockStart!.contentBlockIndex ?? index, index);
      return [{ type: "tool_call", index, id: toolUse.toolUseId ?? "", name: toolUse.name ?? "" }];
    }
    const delta = event.contentBlockDelta?.delta;
    if (delta?.text) return [{ type: "text", text: delta.text }];
    if (delta?.toolUse?.input !== undefined) {
      const index = tools.get(event.contentBlockDelta!.contentBlockIndex ?? 0);
      return index === undefined ? [] : [{ type: "tool_args", index, text: delta.toolUse.input }];
    }
    if (event.messageStop) return [{ type: "finish", finish: fromStopReason(event.messageStop.stopReason) }];
    const usage = event.metadata?.usage;
    if (usage) return [{ type: "usage", inputTokens: usage.inputTokens, outputTokens: usage.outputTokens }];
    return [];
  };
}
