import { finishFrom, randomId, type StreamDecoder } from "../../formats/codec.ts";
import { isObject, stringOr, type Json } from "../../formats/read.ts";
import { fromOpenAIChat } from "../../formats/usage.ts";
import { alternating, systemOnTop, type ChatReply, type ChatRequest, type Finish, type FinishReason, type Message, type Part, type ResponseFormat, type StreamEvent, type ToolChoice, type Usage } from "../../ir.ts";
import { refuseUnsupported } from "../cross-family.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";

/** OpenAI Chat Completions as the OpenAI provider sends and reads it: IR -> request, reply -> IR. */

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

/**
 * A whole reply -> IR. The check is tolerant (local servers leave fields out) but a reply that is
 * not a completion, or a tool call without a name, is the upstream failing: `bad` says so.
 */
export function decodeReply(body: unknown, up: Upstream): ChatReply {
  const bad = (what: string) => badShape(up, what, JSON.stringify(body));
  if (!isObject(body) || !Array.isArray(body.choices) || !isObject(body.choices[0])) throw bad("no choices in the completion");
  const choice = body.choices[0];
  // No message is an answer only when the upstream says why it stopped (a content filter, say).
  if ((choice.message === undefined || choice.message === null) && typeof choice.finish_reason !== "string") throw bad("choices[0] has no message and no finish_reason");
  const message = choice.message ?? {};
  if (!isObject(message)) throw bad("choices[0].message is not an object");
  const content: Part[] = [];
  const reasoning = stringOr(message.reasoning_content) ?? stringOr(message.reasoning);
  if (reasoning) content.push({ type: "reasoning", text: reasoning });
  const text = textOf(message.content);
  if (text === undefined) throw bad("message.content is neither text nor null");
  if (text) content.push({ type: "text", text });
  const calls = message.tool_calls ?? [];
  if (!Array.isArray(calls)) throw bad("message.tool_calls is not a list");
  for (const call of calls) {
    const fn = isObject(call) && isObject(call.function) ? call.function : undefined;
    if (!fn || typeof fn.name !== "string" || !fn.name) throw bad("a tool call without a name");
    content.push({ type: "tool_call", id: toolCallId(call.id), name: fn.name, arguments: argumentsText(fn.arguments) });
  }
  return { id: typeof body.id === "string" ? body.id : undefined, content, finish: fromFinishReason(stringOr(choice.finish_reason)), usage: decodeUsage(body.usage) };
}

/**
 * A completion passed through: the checks of `decodeReply` (the same replies are refused with a
 * 503), without building the IR the passthrough does not need. Returns the token counts.
 */
export function checkCompletion(body: unknown, up: Upstream): Usage | undefined {
  const bad = (what: string) => badShape(up, what, JSON.stringify(body));
  if (!isObject(body) || !Array.isArray(body.choices) || !isObject(body.choices[0])) throw bad("no choices in the completion");
  const choice = body.choices[0];
  const message = choice.message;
  if (message === undefined || message === null) {
    if (typeof choice.finish_reason !== "string") throw bad("choices[0] has no message and no finish_reason");
    return decodeUsage(body.usage);
  }
  if (!isObject(message)) throw bad("choices[0].message is not an object");
  if (textOf(message.content) === undefined) throw bad("message.content is neither text nor null");
  const calls = message.tool_calls;
  if (calls !== undefined && calls !== null) {
    if (!Array.isArray(calls)) throw bad("message.tool_calls is not a list");
    for (const call of calls) {
      const fn = isObject(call) && isObject(call.function) ? call.function : undefined;
      if (!fn || typeof fn.name !== "string" || !fn.name) throw bad("a tool call without a name");
    }
  }
  return decodeUsage(body.usage);
}

/** One stream chunk -> IR events; a chunk of the wrong shape is the upstream failing. */
export function streamDecoder(up: Upstream): StreamDecoder<unknown> {
  let started = false;
  const named = new Set<number>();
  return (chunk) => {
    const bad = (what: string) => badShape(up, what, JSON.stringify(chunk));
    if (!isObject(chunk)) throw bad("a stream chunk that is not an object");
    const events: StreamEvent[] = [];
    if (!started) {
      started = true;
      events.push({ type: "start", id: typeof chunk.id === "string" ? chunk.id : undefined });
    }
    const choices = chunk.choices ?? [];
    if (!Array.isArray(choices)) throw bad("choices is not a list");
    const choice = choices[0];
    if (choice !== undefined) {
      if (!isObject(choice)) throw bad("choices[0] is not an object");
      const delta = choice.delta ?? {};
      if (!isObject(delta)) throw bad("choices[0].delta is not an object");
      const text = textOf(delta.content);
      if (text === undefined) throw bad("delta.content is neither text nor null");
      // Some OpenAI-compatible servers (DeepSeek, vLLM) stream the model's reasoning beside the answer.
      const reasoning = stringOr(delta.reasoning_content) ?? stringOr(delta.reasoning);
      if (reasoning) events.push({ type: "reasoning", text: reasoning });
      if (text) events.push({ type: "text", text });
      const calls = delta.tool_calls ?? [];
      if (!Array.isArray(calls)) throw bad("delta.tool_calls is not a list");
      for (const call of calls) events.push(...toolCallDelta(call, named, bad));
      const finish = stringOr(choice.finish_reason);
      if (finish) events.push({ type: "finish", finish: fromFinishReason(finish) });
    }
    const usage = decodeUsage(chunk.usage);
    if (usage) events.push({ type: "usage", usage });
    return events;
  };
}

/** A tool call arrives in fragments: the first names it, the rest carry argument text. */
function toolCallDelta(call: unknown, named: Set<number>, bad: (what: string) => Error): StreamEvent[] {
  if (!isObject(call)) throw bad("a tool call fragment that is not an object");
  const index = typeof call.index === "number" ? call.index : 0;
  const fn = isObject(call.function) ? call.function : {};
  const events: StreamEvent[] = [];
  if (!named.has(index)) {
    if (typeof fn.name !== "string" || !fn.name) throw bad("a streamed tool call without a name");
    named.add(index);
    events.push({ type: "tool_call", index, id: toolCallId(call.id), name: fn.name });
  }
  if (typeof fn.arguments === "string" && fn.arguments) events.push({ type: "tool_args", index, text: fn.arguments });
  return events;
}

/** Text content: a string, nothing, or (some servers) a list of text parts; undefined when it is none of those. */
function textOf(content: unknown): string | undefined {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (isObject(p) && typeof p.text === "string" ? p.text : "")).join("");
  return undefined;
}

// Some local servers send no tool call ids; clients need one to answer the call.
const toolCallId = (id: unknown) => (typeof id === "string" && id ? id : randomId("call_"));
const argumentsText = (args: unknown) => (typeof args === "string" ? args : JSON.stringify(args ?? {}));
const decodeUsage = fromOpenAIChat;
