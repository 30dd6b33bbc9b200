import type { Json } from "../../lib/read.ts";
import { alternating, systemOnTop, type ChatRequest, type Message, type ResponseFormat, type ToolChoice } from "../../ir.ts";
import { refuseUnsupported } from "../cross-family.ts";

/** The IR as a Chat Completions request, for any OpenAI-compatible upstream. */

export function encodeRequest(request: ChatRequest, model: string, onTop = false): Json {
  refuseUnsupported(request, "An OpenAI model");
  const messages: Json[] = [];
  if (onTop) {
    // For a chat template that wants one system message first and turns that alternate.
    const { system, messages: turns } = systemOnTop(request);
    if (system.length) messages.push({ role: "system", content: system.join("\n\n") });
    for (const message of alternating(turns)) messages.push(...encodeMessage(message));
  } else {
    for (const content of request.system) messages.push({ role: "system", content });
    for (const message of request.messages) messages.push(...encodeMessage(message));
  }
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
    ...(request.tools?.length && request.parallelToolCalls === false ? { parallel_tool_calls: false } : {}),
    ...(request.responseFormat ? { response_format: encodeResponseFormat(request.responseFormat) } : {}),
    ...(request.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

function encodeResponseFormat(format: ResponseFormat): Json {
  if (format.type === "json_object") return { type: "json_object" };
  const { name, schema, description, strict } = format;
  return { type: "json_schema", json_schema: { name, schema, ...(description ? { description } : {}), ...(strict !== undefined ? { strict } : {}) } };
}

function encodeMessage(message: Message): Json[] {
  // OpenAI takes system messages anywhere: one said mid-conversation stays where it was (and the prefix stays cacheable).
  if (message.role === "system") {
    const texts = message.content.flatMap((p) => (p.type === "text" ? [{ type: "text", text: p.text }] : []));
    return [{ role: "system", content: texts.length === 1 ? texts[0]!.text : texts }];
  }
  if (message.role === "assistant") {
    const text = message.content.filter((p) => p.type === "text").map((p) => p.text).join("");
    const calls = message.content.flatMap((p) =>
      p.type === "tool_call" ? [{ id: p.id, type: "function", function: { name: p.name, arguments: p.arguments } }] : [],
    );
    return [{ role: "assistant", content: text || (calls.length ? null : ""), ...(calls.length ? { tool_calls: calls } : {}) }];
  }
  const results = message.content.flatMap((p) => (p.type === "tool_result" ? [{ role: "tool", tool_call_id: p.toolCallId, content: p.content }] : []));
  const rest = message.content.filter((p) => p.type !== "tool_result" && p.type !== "reasoning");
  if (rest.length === 0) return results;
  // Text parts (blocks of one message, or two turns made one) are one string, a blank line between them.
  const simple = rest.every((p) => p.type === "text");
  const content = simple
    ? rest.map((p) => (p.type === "text" ? p.text : "")).join("\n\n")
    : rest.map((p) =>
        p.type === "text" ? { type: "text", text: p.text }
        : p.type === "image" ? { type: "image_url", image_url: { url: `data:${p.mediaType};base64,${p.data}` } }
        : p.type === "image_url" ? { type: "image_url", image_url: { url: p.url } }
        : p.type === "document" ? { type: "file", file: { filename: p.title ?? "document.pdf", file_data: `data:${p.mediaType};base64,${p.data}` } }
        : { type: "text", text: "" },
      );
  return [...results, { role: "user", content }];
}

function encodeToolChoice(choice: ToolChoice): unknown {
  return choice.type === "tool" ? { type: "function", function: { name: choice.name } } : choice.type;
}
