import { invalidRequest, validationError } from "../../errors.ts";
import {
  asksThinking, fileIds, isObject, messageList, numberIn, objectList, optionalBoolean, optionalString, positiveInt, stringList, type Json,
} from "../../lib/read.ts";
import { pushSystem, type ChatRequest, type Message, type Part, type ResponseFormat, type Tool, type ToolChoice } from "../../ir.ts";

/**
 * A client's Anthropic Messages request -> IR, for `/v1/messages` and the spec's `beta_messages`
 * format alike. What the IR cannot carry is listed in `request.unsupported`, and a target that
 * cannot take it refuses with a 400 naming it; what changes nothing the user relies on
 * (cache_control, metadata) is dropped.
 */

/** Where the two endpoints differ. */
export interface DecodeOptions {
  /** Anthropic's API requires `max_tokens`; beta_messages defaults it. */
  defaultMaxTokens?: number;
  /** parley's `file_ids` (beta_messages). */
  files: boolean;
  /** Whether a stream ends with usage (Anthropic's always does). */
  includeUsage: boolean;
}

/** As api.anthropic.com reads it. */
const API: DecodeOptions = { files: false, includeUsage: true };

export function decodeRequest(body: Json, options: DecodeOptions = API): ChatRequest {
  const unsupported: string[] = [];
  const system = decodeSystem(body.system);
  const messages: Message[] = [];
  messageList(body).forEach((m, i) => {
    const at = `messages[${i}]`;
    // Mid-conversation system messages (Claude Opus 4.8 on; Claude Code sends them) stay in place.
    if (m.role === "system") return pushSystem(system, messages, decodeSystem(m.content, `${at}.content`));
    if (m.role !== "user" && m.role !== "assistant") throw invalidRequest(`${at}.role: Input should be 'user', 'assistant' or 'system'`, `${at}.role: must be user, assistant or system`);
    messages.push({ role: m.role, content: decodeBlocks(m.content, at, unsupported) });
  });
  const maxTokens = positiveInt(body, "max_tokens") ?? options.defaultMaxTokens;
  if (maxTokens === undefined) throw invalidRequest("max_tokens: Field required", "max_tokens: required");
  const choice = decodeToolChoice(body.tool_choice);
  for (const field of ["mcp_servers", "container"]) if (body[field] !== undefined && body[field] !== null) unsupported.push(field);
  return {
    model: optionalString(body, "model"),
    system,
    messages,
    maxTokens,
    temperature: numberIn(body, "temperature", 0, 1),
    topP: numberIn(body, "top_p", 0, 1),
    topK: positiveInt(body, "top_k"),
    stop: stringList(body, "stop_sequences"),
    tools: decodeTools(body, unsupported),
    toolChoice: choice?.choice,
    ...(choice?.parallel === false ? { parallelToolCalls: false } : {}),
    stream: optionalBoolean(body, "stream") ?? false,
    includeUsage: options.includeUsage,
    fileIds: options.files ? fileIds(body) : [],
    responseFormat: decodeOutputFormat(body.output_format),
    ...(unsupported.length ? { unsupported } : {}),
    ...(asksThinking(body) ? { thinking: true } : {}),
  };
}

/** System text blocks, one IR entry each (their cache_control marks only change cost). */
function decodeSystem(system: unknown, at = "system"): string[] {
  if (system === undefined || system === null || system === "") return [];
  if (typeof system === "string") return [system];
  if (!Array.isArray(system)) throw validationError(at, "must be a string or an array of text blocks");
  return system.map((block, i) => {
    if (!isObject(block) || block.type !== "text" || typeof block.text !== "string") throw validationError(`${at}[${i}]`, "must be a text block");
    return block.text;
  });
}

function decodeBlocks(content: unknown, at: string, unsupported: string[]): Part[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw validationError(`${at}.content`, "must be a string or an array of content blocks");
  return content.flatMap((block, j) => decodeBlock(block, `${at}.content[${j}]`, unsupported));
}

function decodeBlock(block: unknown, at: string, unsupported: string[]): Part[] {
  if (!isObject(block)) throw validationError(at, "must be a content block object");
  switch (block.type) {
    case "text":
      if (typeof block.text !== "string") throw validationError(`${at}.text`, "must be a string");
      return [{ type: "text", text: block.text }];
    case "image": {
      const source = isObject(block.source) ? block.source : {};
      if (source.type === "base64" && typeof source.media_type === "string" && typeof source.data === "string") {
        return [{ type: "image", mediaType: source.media_type, data: source.data }];
      }
      if (source.type === "url" && typeof source.url === "string") return [{ type: "image_url", url: source.url }];
      throw validationError(`${at}.source`, "must be {type: base64, media_type, data} or {type: url, url}");
    }
    case "document": {
      const source = isObject(block.source) ? block.source : {};
      const title = typeof block.title === "string" ? block.title : undefined;
      if (source.type === "base64" && typeof source.media_type === "string" && typeof source.data === "string") {
        return [{ type: "document", mediaType: source.media_type, data: source.data, ...(title ? { title } : {}) }];
      }
      if (source.type === "text" && typeof source.data === "string") return [{ type: "text", text: title ? `${title}\n\n${source.data}` : source.data }];
      unsupported.push(`${at} (a document of source type ${String(source.type)})`);
      return [];
    }
    case "tool_use":
      if (typeof block.id !== "string" || typeof block.name !== "string") throw validationError(at, "tool_use needs an id and a name");
      return [{ type: "tool_call", id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) }];
    case "tool_result":
      if (typeof block.tool_use_id !== "string") throw validationError(`${at}.tool_use_id`, "is required");
      return [{
        type: "tool_result",
        toolCallId: block.tool_use_id,
        content: toolResultText(block.content, `${at}.content`, unsupported),
        ...(block.is_error === true ? { isError: true } : {}),
      }];
    case "thinking":
      if (typeof block.thinking !== "string") throw validationError(`${at}.thinking`, "must be a string");
      return [{ type: "reasoning", text: block.thinking, ...(typeof block.signature === "string" ? { signature: block.signature } : {}) }];
    case "redacted_thinking":
      if (typeof block.data !== "string") throw validationError(`${at}.data`, "must be a string");
      return [{ type: "reasoning", text: "", redacted: block.data }];
    default:
      // Server tool calls and results, search results, container uploads: only Claude reads them.
      unsupported.push(`${at} (a ${String(block.type)} block)`);
      return [];
  }
}

function toolResultText(content: unknown, at: string, unsupported: string[]): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw validationError(at, "must be a string or an array of content blocks");
  return content.map((block, k) => {
    if (isObject(block) && block.type === "text" && typeof block.text === "string") return block.text;
    unsupported.push(`${at}[${k}] (a ${isObject(block) ? String(block.type) : "non-object"} block in a tool result)`);
    return "";
  }).join("");
}

function decodeTools(body: Json, unsupported: string[]): Tool[] | undefined {
  return objectList(body, "tools")?.flatMap((tool, i) => {
    if (tool.type !== undefined && tool.type !== null && tool.type !== "custom") {
      unsupported.push(`tools[${i}] (the server tool ${String(tool.type)})`);
      return [];
    }
    if (typeof tool.name !== "string") throw validationError(`tools[${i}].name`, "is required");
    return [{
      name: tool.name,
      description: typeof tool.description === "string" ? tool.description : undefined,
      parameters: isObject(tool.input_schema) ? tool.input_schema : { type: "object", properties: {} },
    }];
  });
}

function decodeToolChoice(value: unknown): { choice: ToolChoice; parallel?: boolean } | undefined {
  if (value === undefined || value === null) return undefined;
  if (isObject(value)) {
    const parallel = value.disable_parallel_tool_use === true ? false : undefined;
    if (value.type === "auto" || value.type === "none") return { choice: { type: value.type }, parallel };
    if (value.type === "any") return { choice: { type: "required" }, parallel };
    if (value.type === "tool" && typeof value.name === "string") return { choice: { type: "tool", name: value.name }, parallel };
  }
  throw validationError("tool_choice", "must be {type: auto|any|none} or {type: tool, name}");
}

/** Anthropic's structured outputs (`output_format: {type: json_schema, schema}`). */
function decodeOutputFormat(value: unknown): ResponseFormat | undefined {
  if (value === undefined || value === null) return undefined;
  if (isObject(value) && value.type === "json_schema" && isObject(value.schema)) return { type: "json_schema", name: "output", schema: value.schema, strict: true };
  throw validationError("output_format", "must be {type: json_schema, schema}");
}
