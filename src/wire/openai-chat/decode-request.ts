import { validationError } from "../../errors.ts";
import {
  asksThinking, fileIds, isObject, messageList, numberIn, objectList, optionalBoolean, optionalString, parseDataUrl, positiveInt, stringList,
  type Json,
} from "../../lib/read.ts";
import { pushSystem, type CacheControl, type ChatRequest, type Message, type Part, type ResponseFormat, type Tool, type ToolChoice } from "../../ir.ts";
import { textOf } from "./reply.ts";

/** A client's Chat Completions request (the spec's `alpha` format) -> IR. */

export function decodeRequest(body: Json): ChatRequest {
  const system: string[] = [];
  const messages: Message[] = [];
  let systemCache: (CacheControl | undefined)[] | undefined;
  messageList(body).forEach((m, i) => {
    const at = `messages[${i}]`;
    const cache = cacheOf(m);
    switch (m.role) {
      case "system":
      case "developer": {
        const before = system.length;
        pushSystem(system, messages, [contentText(m.content, at)]);
        if (!cache) return;
        if (system.length > before) (systemCache ??= [])[system.length - 1] = cache;
        else markLast(messages.at(-1)?.content, cache);
        return;
      }
      case "user":
        // A user part keeps its own mark where it is; the message's goes on its last part.
        return push(messages, "user", marked(userParts(m.content, at), isObject(m.cache_control) ? m.cache_control : undefined));
      case "assistant":
        return push(messages, "assistant", marked(assistantParts(m, at), cache));
      case "tool": {
        const toolCallId = m.tool_call_id;
        if (typeof toolCallId !== "string") throw validationError(`${at}.tool_call_id`, "is required on a tool message");
        return push(messages, "user", [{ type: "tool_result", toolCallId, content: contentText(m.content, at), ...(cache ? { cache } : {}) }]);
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
    ...(body.parallel_tool_calls === false ? { parallelToolCalls: false } : {}),
    responseFormat: decodeResponseFormat(body.response_format),
    ...(asksThinking(body) ? { thinking: true } : {}),
    ...(systemCache ? { systemCache } : {}),
    autoCache: true,
  };
}

/**
 * A message's `cache_control` (OpenRouter-style clients put Anthropic's on a message, or on its
 * last content part, which is where it applies): the message's own, else its content parts' last.
 */
function cacheOf(m: Json): CacheControl | undefined {
  if (isObject(m.cache_control)) return m.cache_control;
  if (!Array.isArray(m.content)) return undefined;
  for (let j = m.content.length - 1; j >= 0; j--) {
    const part = m.content[j];
    if (isObject(part) && isObject(part.cache_control)) return part.cache_control;
  }
  return undefined;
}

/** The mark on the message's last text or tool-result part, where Anthropic reads a message's breakpoint. */
function marked(parts: Part[], cache: CacheControl | undefined): Part[] {
  if (cache) markLast(parts, cache);
  return parts;
}

function markLast(parts: Part[] | undefined, cache: CacheControl) {
  const last = parts?.findLast((p) => p.type === "text" || p.type === "tool_result");
  if (last && (last.type === "text" || last.type === "tool_result")) last.cache = cache;
}

/** `text` is the default shape: nothing to ask for. */
function decodeResponseFormat(value: unknown): ResponseFormat | undefined {
  if (value === undefined || value === null) return undefined;
  if (isObject(value) && value.type === "text") return undefined;
  if (isObject(value) && value.type === "json_object") return { type: "json_object" };
  const spec = isObject(value) && value.type === "json_schema" && isObject(value.json_schema) ? value.json_schema : undefined;
  if (!spec || typeof spec.name !== "string" || !isObject(spec.schema)) {
    throw validationError("response_format", "must be {type: text}, {type: json_object} or {type: json_schema, json_schema: {name, schema}}");
  }
  return {
    type: "json_schema", name: spec.name, schema: spec.schema,
    ...(typeof spec.description === "string" ? { description: spec.description } : {}),
    ...(typeof spec.strict === "boolean" ? { strict: spec.strict } : {}),
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
  const text = textOf(content);
  if (text === undefined) throw validationError(`${at}.content`, "must be a string or an array of content parts");
  return text;
}

function userParts(content: unknown, at: string): Part[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw validationError(`${at}.content`, "must be a string or an array of content parts");
  return content.map((p, j): Part => {
    if (isObject(p) && p.type === "text" && typeof p.text === "string") return isObject(p.cache_control) ? { type: "text", text: p.text, cache: p.cache_control } : { type: "text", text: p.text };
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
