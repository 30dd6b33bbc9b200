import { invalidRequest, validationError } from "../../errors.ts";
import { asksThinking, isObject, numberIn, objectList, optionalBoolean, optionalString, parseDataUrl, positiveInt, type Json } from "../../lib/read.ts";
import { pushSystem, textOf, type ChatRequest, type Message, type Part, type Tool, type ToolChoice } from "../../ir.ts";
import { reasoningPart, summaryOf } from "./sealed.ts";

/**
 * A client's Responses API request (stateless) -> IR, for the converted route. What only OpenAI
 * itself can do (stored responses, hosted tools) is refused with a 400 or, for tools, dropped and
 * named by the route.
 */

type NeedsNative = NonNullable<ChatRequest["needsNative"]>;

/** Fields that need OpenAI's own server: refused on a converted route, forwarded on the passthrough. */
const STATEFUL: Record<string, string> = {
  previous_response_id: "previous_response_id needs responses stored upstream, and this model is answered through a conversion: send the whole conversation in 'input' (and store: false).",
  conversation: "conversation needs a conversation stored upstream, and this model is answered through a conversion: send the whole conversation in 'input'.",
  prompt: "prompt (a stored prompt template) is only available from OpenAI itself: send the text in 'instructions' and 'input'.",
};

/** How a compacted conversation's summary is put before the model. */
const SUMMARY_HEAD = "The conversation so far was compacted. Its summary:";

/** Calls of tools that are dropped on a converted route: their history items go with them. */
const DROPPED_CALLS = new Set([
  "web_search_call", "file_search_call", "computer_call", "computer_call_output", "local_shell_call", "local_shell_call_output",
  "shell_call", "shell_call_output", "apply_patch_call", "apply_patch_call_output", "custom_tool_call", "custom_tool_call_output",
  "image_generation_call", "code_interpreter_call", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "mcp_call",
  "tool_search_call", "tool_search_output",
]);

export function decodeRequest(body: Json): ChatRequest {
  let needsNative: NeedsNative | undefined;
  const refuse = (field: string, reason: string) => void (needsNative ??= { field, reason });
  for (const field of Object.keys(STATEFUL)) if (body[field] !== undefined && body[field] !== null) refuse(field, STATEFUL[field]!);
  if (body.background === true) refuse("background", "background responses are only available from OpenAI itself.");
  const format = isObject(body.text) && isObject(body.text.format) ? body.text.format.type : undefined;
  if (format !== undefined && format !== "text") {
    refuse("text.format", `text.format '${String(format)}' is not converted for this model: structured output on /v1/responses is available for OpenAI models.`);
  }

  const system: string[] = [];
  const instructions = optionalString(body, "instructions");
  if (instructions) system.push(instructions);
  const messages: Message[] = [];
  inputItems(body).forEach((item, i) => decodeItem(item, `input[${i}]`, system, messages, refuse));
  // When every tool was dropped, there is nothing left to choose from.
  const tools = decodeTools(body);
  const toolChoice = decodeToolChoice(body.tool_choice, refuse);

  return {
    model: optionalString(body, "model"),
    system,
    messages,
    maxTokens: positiveInt(body, "max_output_tokens"),
    temperature: numberIn(body, "temperature", 0, 2),
    topP: numberIn(body, "top_p", 0, 1),
    ...(tools?.length ? { tools, toolChoice } : {}),
    stream: optionalBoolean(body, "stream") ?? false,
    includeUsage: true,
    fileIds: [],
    ...(needsNative ? { needsNative } : {}),
    ...(asksThinking(body) ? { thinking: true } : {}),
    autoCache: true,
  };
}

/** `input`: a string (one user message) or a list of items. */
function inputItems(body: Json): Json[] {
  const input = body.input;
  if (input === undefined || input === null) throw invalidRequest("Missing required field 'input'.", "input: required");
  if (typeof input === "string") return [{ type: "message", role: "user", content: input }];
  if (!Array.isArray(input)) throw validationError("input", "must be a string or an array of items");
  input.forEach((item, i) => {
    if (!isObject(item)) throw validationError(`input[${i}]`, "must be an object");
  });
  return input as Json[];
}

function decodeItem(item: Json, at: string, system: string[], messages: Message[], refuse: (field: string, reason: string) => void) {
  const type = item.type ?? "message";
  switch (type) {
    case "message": {
      const parts = contentParts(item.content, at, refuse);
      switch (item.role) {
        case "system":
        case "developer":
          return pushSystem(system, messages, [textOf(parts)]);
        case "user":
          return push(messages, "user", parts);
        case "assistant":
          return push(messages, "assistant", parts);
        default:
          throw validationError(`${at}.role`, "must be one of user, assistant, system, developer");
      }
    }
    case "function_call": {
      if (typeof item.call_id !== "string" || typeof item.name !== "string") throw validationError(at, "a function_call needs call_id and name");
      const args = typeof item.arguments === "string" ? item.arguments : JSON.stringify(item.arguments ?? {});
      return push(messages, "assistant", [{ type: "tool_call", id: item.call_id, name: item.name, arguments: args }]);
    }
    case "function_call_output": {
      if (typeof item.call_id !== "string") throw validationError(`${at}.call_id`, "is required on a function_call_output");
      return push(messages, "user", [{ type: "tool_result", toolCallId: item.call_id, content: outputText(item.output, at, refuse) }]);
    }
    case "reasoning": {
      // Claude's thinking, sealed by parley in an earlier turn, goes back to Claude as it was written;
      // any other reasoning (OpenAI's, encrypted for OpenAI) no other model can read.
      const part = reasoningPart(item);
      return part && push(messages, "assistant", [part]);
    }
    case "compaction":
      return push(messages, "user", [{ type: "text", text: `${SUMMARY_HEAD}\n\n${summaryOf(item, at)}` }]);
    case "item_reference":
      return refuse(at, `${at} is an item_reference, which needs items stored upstream: send the item itself.`);
    default:
      if (typeof type === "string" && DROPPED_CALLS.has(type)) return;
      throw validationError(`${at}.type`, `'${String(type)}' is not an input item parley knows`);
  }
}

/** One item's content: a string, or a list of input_text / output_text / input_image parts. */
function contentParts(content: unknown, at: string, refuse: (field: string, reason: string) => void): Part[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw validationError(`${at}.content`, "must be a string or an array of content parts");
  return content.flatMap((p, j): Part[] => {
    const where = `${at}.content[${j}]`;
    if (!isObject(p)) throw validationError(where, "must be an object");
    switch (p.type) {
      case "input_text":
      case "output_text":
      case "text":
        if (typeof p.text !== "string") throw validationError(`${where}.text`, "must be a string");
        return [{ type: "text", text: p.text }];
      case "refusal":
        return typeof p.refusal === "string" ? [{ type: "text", text: p.refusal }] : [];
      case "input_image": {
        if (typeof p.image_url !== "string") {
          refuse(where, `${where}: an input_image by file_id is only available from OpenAI itself: send image_url (a data: URL).`);
          return [];
        }
        const inline = parseDataUrl(p.image_url);
        return [inline ? { type: "image", ...inline } : { type: "image_url", url: p.image_url }];
      }
      case "input_file":
        refuse(where, `${where}: input_file is not converted for this model: attach text files with /v1/files and file_ids on /v1/chat/completions.`);
        return [];
      default:
        throw validationError(`${where}.type`, "must be input_text, output_text, input_image or input_file");
    }
  });
}

/** A function_call_output's output: text, or a list whose text parts are joined. */
function outputText(output: unknown, at: string, refuse: (field: string, reason: string) => void): string {
  if (typeof output === "string") return output;
  if (!Array.isArray(output)) throw validationError(`${at}.output`, "must be a string or an array of content parts");
  return output.map((p, j) => {
    if (isObject(p) && p.type === "input_text" && typeof p.text === "string") return p.text;
    refuse(`${at}.output[${j}]`, `${at}.output[${j}]: only input_text parts of a function_call_output are converted for this model.`);
    return "";
  }).join("");
}

/** Consecutive items of one role become one message: a call's results, or an answer and its calls. */
function push(messages: Message[], role: Message["role"], content: Part[]) {
  const last = messages.at(-1);
  const results = (parts: Part[]) => parts.every((p) => p.type === "tool_result");
  const mergeable = last?.role === role && (role === "assistant" || (results(content) && results(last.content)));
  if (mergeable) last.content.push(...content);
  else messages.push({ role, content });
}

/** Function tools; every other type is the upstream's own tool and is dropped (see droppedTools). */
function decodeTools(body: Json): Tool[] | undefined {
  const tools = objectList(body, "tools");
  if (!tools) return undefined;
  return tools.flatMap((tool, i): Tool[] => {
    if (tool.type !== "function") return [];
    if (typeof tool.name !== "string") throw validationError(`tools[${i}].name`, "is required");
    return [{
      name: tool.name,
      description: typeof tool.description === "string" ? tool.description : undefined,
      parameters: isObject(tool.parameters) ? tool.parameters : { type: "object", properties: {} },
    }];
  });
}

/** The types of the tools a converted route drops, in order, once each: the route names them in a header. */
export function droppedTools(body: Json): string[] {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  return [...new Set(tools.flatMap((t) => (isObject(t) && t.type !== "function" ? [String(t.type)] : [])))];
}

function decodeToolChoice(value: unknown, refuse: (field: string, reason: string) => void): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === "auto" || value === "none" || value === "required") return { type: value };
  if (isObject(value) && value.type === "function" && typeof value.name === "string") return { type: "tool", name: value.name };
  if (isObject(value) && value.type === "allowed_tools" && (value.mode === "auto" || value.mode === "required")) return { type: value.mode };
  if (isObject(value) && typeof value.type === "string") {
    refuse("tool_choice", `tool_choice '${value.type}' forces a tool this model cannot run here.`);
    return undefined;
  }
  throw validationError("tool_choice", "must be auto, none, required or {type: function, name}");
}
