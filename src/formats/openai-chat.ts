import { validationError } from "../errors.ts";
import type { ChatReply, ChatRequest, Finish, FinishReason, Message, Part, SseEvent, Tool, ToolChoice, Usage } from "../ir.ts";
import { finishFrom, randomId, usageTracker, type Codec, type StreamDecoder, type StreamEncoder } from "./codec.ts";
import {
  fileIds, isObject, messageList, numberIn, objectList, optionalBoolean, optionalString, parseDataUrl, positiveInt, stringList,
  type Json,
} from "./read.ts";

/** OpenAI Chat Completions: the spec's `alpha` format, and the wire format of the OpenAI provider. */

// ---- client request -> IR ----

export function decodeRequest(body: Json): ChatRequest {
  const system: string[] = [];
  const messages: Message[] = [];
  messageList(body).forEach((m, i) => {
    const at = `messages[${i}]`;
    switch (m.role) {
      case "system":
      case "developer":
        system.push(contentText(m.content, at));
        return;
      case "user":
        return push(messages, "user", userParts(m.content, at));
      case "assistant":
        return push(messages, "assistant", assistantParts(m, at));
      case "tool": {
        const toolCallId = m.tool_call_id;
        if (typeof toolCallId !== "string") throw validationError(`${at}.tool_call_id`, "is required on a tool message");
        return push(messages, "user", [{ type: "tool_result", toolCallId, content: contentText(m.content, at) }]);
      }
      default:
        throw validationError(`${at}.role`, "must be one of system, developer, user, assistant, tool");
    }
  });
  const streamOptions = isObject(body.stream_options) ? body.stream_options : {};
  return {
    model: optionalString(body, "model"),
    system,
    messages,
    maxTokens: positiveInt(body, "max_completion_tokens") ?? positiveInt(body, "max_tokens"),
    temperature: numberIn(body, "temperature", 0, 2),
    topP: numberIn(body, "top_p", 0, 1),
    stop: stringList(body, "stop"),
    tools: decodeTools(body),
    toolChoice: decodeToolChoice(body.tool_choice),
    stream: optionalBoolean(body, "stream") ?? false,
    includeUsage: streamOptions.include_usage === true,
    fileIds: fileIds(body),
  };
}

/** Consecutive messages of one role become one, as tool results after each other must. */
function push(messages: Message[], role: Message["role"], content: Part[]) {
  const last = messages.at(-1);
  const mergeable = last?.role === role && role === "user" && content.every((p) => p.type === "tool_result") && last.content.every((p) => p.type === "tool_result");
  if (mergeable) last.content.push(...content);
  else messages.push({ role, content });
}

function contentText(content: unknown, at: string): string {
  if (typeof content === "string") return content;
  if (content === null || content === undefined) return "";
  if (Array.isArray(content)) return content.map((p) => (isObject(p) && typeof p.text === "string" ? p.text : "")).join("");
  throw validationError(`${at}.content`, "must be a string or an array of content parts");
}

function userParts(content: unknown, at: string): Part[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw validationError(`${at}.content`, "must be a string or an array of content parts");
  return content.map((p, j): Part => {
    if (isObject(p) && p.type === "text" && typeof p.text === "string") return { type: "text", text: p.text };
    if (isObject(p) && p.type === "image_url") {
      const url = isObject(p.image_url) ? p.image_url.url : p.image_url;
      if (typeof url !== "string") throw validationError(`${at}.content[${j}].image_url.url`, "must be a string");
      const inline = parseDataUrl(url);
      return inline ? { type: "image", ...inline } : { type: "image_url", url };
    }
    throw validationError(`${at}.content[${j}]`, "must be a text or image_url part");
  });
}

function assistantParts(m: Json, at: string): Part[] {
  const text = contentText(m.content, at);
  const parts: Part[] = text ? [{ type: "text", text }] : [];
  (objectList(m, "tool_calls") ?? []).forEach((call, j) => {
    const fn = isObject(call.function) ? call.function : {};
    if (typeof call.id !== "string" || typeof fn.name !== "string") {
      throw validationError(`${at}.tool_calls[${j}]`, "needs an id and function.name");
    }
    const args = typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments ?? {});
    parts.push({ type: "tool_call", id: call.id, name: fn.name, arguments: args });
  });
  return parts;
}

function decodeTools(body: Json): Tool[] | undefined {
  return objectList(body, "tools")?.map((tool, i) => {
    const fn = isObject(tool.function) ? tool.function : undefined;
    if (!fn || typeof fn.name !== "string") throw validationError(`tools[${i}].function.name`, "is required");
    return {
      name: fn.name,
      description: typeof fn.description === "string" ? fn.description : undefined,
      parameters: isObject(fn.parameters) ? fn.parameters : { type: "object", properties: {} },
    };
  });
}

function decodeToolChoice(value: unknown): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === "auto" || value === "none" || value === "required") return { type: value };
  if (isObject(value) && isObject(value.function) && typeof value.function.name === "string") {
    return { type: "tool", name: value.function.name };
  }
  throw validationError("tool_choice", "must be auto, none, required or {type: function, function: {name}}");
}

// ---- IR -> client reply ----

function toFinishReason(finish: Finish): string {
  switch (finish.reason) {
    case "stop":
    case "stop_sequence":
      return "stop";
    case "length":
      return "length";
    case "tool_calls":
      return "tool_calls";
    case "content_filter":
      return "content_filter";
    default:
      return "stop";
  }
}

const FINISH_REASONS: Record<string, FinishReason> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  content_filter: "content_filter",
};

function fromFinishReason(raw: string | null | undefined): Finish {
  return finishFrom(FINISH_REASONS, raw);
}

const chatId = (id?: string) => (id?.startsWith("chatcmpl") ? id : randomId("chatcmpl-"));
const now = () => Math.floor(Date.now() / 1000);
const usageOf = (u: Usage) => ({ prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.inputTokens + u.outputTokens });

function encodeReply(reply: ChatReply, model: string) {
  const text = reply.content.filter((p) => p.type === "text").map((p) => p.text).join("");
  const calls = reply.content.flatMap((p) =>
    p.type === "tool_call" ? [{ id: p.id, type: "function", function: { name: p.name, arguments: p.arguments } }] : [],
  );
  return {
    id: chatId(reply.id),
    object: "chat.completion",
    created: now(),
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: calls.length && !text ? null : text, ...(calls.length ? { tool_calls: calls } : {}) },
        logprobs: null,
        finish_reason: toFinishReason(reply.finish),
      },
    ],
    ...(reply.usage ? { usage: usageOf(reply.usage) } : {}),
  };
}

function streamEncoder(model: string, request: ChatRequest): StreamEncoder {
  const id = randomId("chatcmpl-");
  const created = now();
  let started = false;
  const usage = usageTracker();
  const chunk = (delta: Json, finish: string | null = null): SseEvent => ({
    data: { id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] },
  });
  const open = (): SseEvent[] => (started ? [] : ((started = true), [chunk({ role: "assistant", content: "" })]));

  return {
    event(event) {
      switch (event.type) {
        case "start":
          usage.add(event);
          return open();
        case "text":
          return [...open(), chunk({ content: event.text })];
        case "tool_call":
          return [...open(), chunk({ tool_calls: [{ index: event.index, id: event.id, type: "function", function: { name: event.name, arguments: "" } }] })];
        case "tool_args":
          return [...open(), chunk({ tool_calls: [{ index: event.index, function: { arguments: event.text } }] })];
        case "finish":
          return [...open(), chunk({}, toFinishReason(event.finish))];
        case "usage":
          usage.add(event);
          return [];
      }
    },
    error: (error) => [{ data: { error: { type: error.type, message: error.message } } }],
    end() {
      const counts = { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0 };
      const tail: SseEvent[] = request.includeUsage && usage.known()
        ? [{ data: { id, object: "chat.completion.chunk", created, model, choices: [], usage: usageOf(counts) } }]
        : [];
      return [...open(), ...tail, { data: "[DONE]" }];
    },
  };
}

export const openaiChat: Codec = { decodeRequest, encodeReply, streamEncoder };

// ---- IR -> OpenAI upstream request, and its answers -> IR ----

export function encodeRequest(request: ChatRequest, model: string): Json {
  const messages: Json[] = request.system.map((content) => ({ role: "system", content }));
  for (const message of request.messages) messages.push(...encodeMessage(message));
  const reasoning = /^o\d/.test(model);
  return {
    model,
    messages,
    ...(request.maxTokens !== undefined ? { [reasoning ? "max_completion_tokens" : "max_tokens"]: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
    ...(request.stop?.length ? { stop: request.stop } : {}),
    ...(request.tools?.length
      ? { tools: request.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } })) }
      : {}),
    ...(request.toolChoice ? { tool_choice: encodeToolChoice(request.toolChoice) } : {}),
    ...(request.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

function encodeMessage(message: Message): Json[] {
  if (message.role === "assistant") {
    const text = message.content.filter((p) => p.type === "text").map((p) => p.text).join("");
    const calls = message.content.flatMap((p) =>
      p.type === "tool_call" ? [{ id: p.id, type: "function", function: { name: p.name, arguments: p.arguments } }] : [],
    );
    return [{ role: "assistant", content: text || (calls.length ? null : ""), ...(calls.length ? { tool_calls: calls } : {}) }];
  }
  const results = message.content.flatMap((p) => (p.type === "tool_result" ? [{ role: "tool", tool_call_id: p.toolCallId, content: p.content }] : []));
  const rest = message.content.filter((p) => p.type !== "tool_result");
  if (rest.length === 0) return results;
  const simple = rest.every((p) => p.type === "text");
  const content = simple
    ? rest.map((p) => (p.type === "text" ? p.text : "")).join("")
    : rest.map((p) =>
        p.type === "text" ? { type: "text", text: p.text }
        : p.type === "image" ? { type: "image_url", image_url: { url: `data:${p.mediaType};base64,${p.data}` } }
        : p.type === "image_url" ? { type: "image_url", image_url: { url: p.url } }
        : { type: "text", text: "" },
      );
  return [...results, { role: "user", content }];
}

function encodeToolChoice(choice: ToolChoice): unknown {
  return choice.type === "tool" ? { type: "function", function: { name: choice.name } } : choice.type;
}

interface UpstreamReply {
  id?: string;
  choices?: { message?: { content?: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[] }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

export function decodeReply(body: UpstreamReply): ChatReply {
  const choice = body.choices?.[0];
  const content: Part[] = choice?.message?.content ? [{ type: "text", text: choice.message.content }] : [];
  for (const call of choice?.message?.tool_calls ?? []) {
    content.push({ type: "tool_call", id: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  return { id: body.id, content, finish: fromFinishReason(choice?.finish_reason), usage: decodeUsage(body.usage) };
}

function decodeUsage(usage: UpstreamReply["usage"]): Usage | undefined {
  return usage ? { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 } : undefined;
}

interface UpstreamChunk {
  id?: string;
  choices?: {
    delta?: { content?: string | null; tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[] };
    finish_reason?: string | null;
  }[];
  usage?: UpstreamReply["usage"];
}

export function streamDecoder(): StreamDecoder<UpstreamChunk> {
  let started = false;
  return (chunk) => {
    const events: ReturnType<StreamDecoder<UpstreamChunk>> = [];
    if (!started) {
      started = true;
      events.push({ type: "start", id: chunk.id });
    }
    const choice = chunk.choices?.[0];
    if (choice?.delta?.content) events.push({ type: "text", text: choice.delta.content });
    for (const call of choice?.delta?.tool_calls ?? []) {
      const index = call.index ?? 0;
      if (call.id || call.function?.name) events.push({ type: "tool_call", index, id: call.id ?? "", name: call.function?.name ?? "" });
      if (call.function?.arguments) events.push({ type: "tool_args", index, text: call.function.arguments });
    }
    if (choice?.finish_reason) events.push({ type: "finish", finish: fromFinishReason(choice.finish_reason) });
    const usage = decodeUsage(chunk.usage);
    if (usage) events.push({ type: "usage", ...usage });
    return events;
  };
}
