import { answeredBy } from "../usage.ts";
import { randomId } from "../codec.ts";
import { isObject, stringOr } from "../../lib/read.ts";
import type { ChatReply, Part, Usage } from "../../ir.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";
import { fromFinishReason, toFinishReason } from "./finish-reason.ts";
import { fromOpenAIChat, toOpenAIChat } from "./usage.ts";

/** A whole completion: read from an upstream into the IR, written from the IR for a client. */

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
  return { id: typeof body.id === "string" ? body.id : undefined, content, finish: fromFinishReason(stringOr(choice.finish_reason)), usage: answeredBy(decodeUsage(body.usage), body.model) };
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
    return answeredBy(decodeUsage(body.usage), body.model);
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
  return answeredBy(decodeUsage(body.usage), body.model);
}

export const chatId = (id?: string) => (id?.startsWith("chatcmpl") ? id : randomId("chatcmpl-"));
export const now = () => Math.floor(Date.now() / 1000);

export function encodeReply(reply: ChatReply, model: string) {
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
    ...(reply.usage ? { usage: toOpenAIChat(reply.usage) } : {}),
  };
}

/** Text content: a string, nothing, or (some servers) a list of text parts; undefined when it is none of those. */
export function textOf(content: unknown): string | undefined {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (isObject(p) && typeof p.text === "string" ? p.text : "")).join("");
  return undefined;
}

// Some local servers send no tool call ids; clients need one to answer the call.
export const toolCallId = (id: unknown) => (typeof id === "string" && id ? id : randomId("call_"));
export const argumentsText = (args: unknown) => (typeof args === "string" ? args : JSON.stringify(args ?? {}));
export const decodeUsage = fromOpenAIChat;
