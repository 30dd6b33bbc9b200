import { answeredBy } from "../usage.ts";
import { randomId } from "../codec.ts";
import { isObject } from "../../lib/read.ts";
import type { ChatReply, Finish, Usage } from "../../ir.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";
import { reasoningItem } from "./sealed.ts";
import { fromResponses, toResponses } from "./usage.ts";

/** A whole response object: written from the IR for a client, checked when an upstream's passes through. */

export type Status = "completed" | "incomplete" | "failed" | "in_progress";

export const INCOMPLETE: Partial<Record<Finish["reason"], string>> = { length: "max_output_tokens", content_filter: "content_filter" };

/** The response object as api.openai.com writes it, for a stateless call. */
export function responseObject(id: string, createdAt: number, model: string, status: Status, output: unknown[], extra: {
  finish?: Finish; usage?: Usage; error?: { code: string; message: string };
} = {}) {
  const reason = extra.finish && INCOMPLETE[extra.finish.reason];
  return {
    id,
    object: "response",
    created_at: createdAt,
    status: reason && status === "completed" ? "incomplete" : status,
    background: false,
    error: extra.error ?? null,
    incomplete_details: reason && status === "completed" ? { reason } : null,
    instructions: null,
    max_output_tokens: null,
    model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: null,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: [],
    top_p: null,
    truncation: "disabled",
    // OpenAI's spec has no null for these: a response without usage (yet) leaves it out, and `user` is never set here.
    ...(extra.usage ? { usage: toResponses(extra.usage) } : {}),
    metadata: {},
  };
}

export const messageItem = (id: string, text: string, status: string) => ({
  id, type: "message", status, role: "assistant", content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
});
export const callItem = (id: string, callId: string, name: string, args: string, status: string) => ({
  id, type: "function_call", status, arguments: args, call_id: callId, name,
});
export const now = () => Math.floor(Date.now() / 1000);

export function encodeReply(reply: ChatReply, model: string) {
  const output: unknown[] = [];
  const text = reply.content.filter((p) => p.type === "text").map((p) => p.text).join("");
  const itemStatus = INCOMPLETE[reply.finish.reason] ? "incomplete" : "completed";
  // Claude's thinking first, sealed, as OpenAI's reasoning items come: the client sends them back with the turn.
  for (const p of reply.content) {
    const item = p.type === "reasoning" ? reasoningItem(randomId("rs_"), p) : undefined;
    if (item) output.push(item);
  }
  if (text) output.push(messageItem(randomId("msg_"), text, itemStatus));
  for (const p of reply.content) if (p.type === "tool_call") output.push(callItem(randomId("fc_"), p.id, p.name, p.arguments, "completed"));
  return responseObject(randomId("resp_"), now(), model, "completed", output, { finish: reply.finish, usage: reply.usage });
}

/**
 * A Responses API reply passed through: checked, never changed, its token counts read. Tolerant,
 * since compatible servers leave fields out, but a reply that is not a response object is the
 * upstream failing (a 503).
 */
export function checkResponse(body: unknown, up: Upstream): Usage | undefined {
  const bad = (what: string) => badShape(up, what, JSON.stringify(body));
  if (!isObject(body)) throw bad("the response is not an object");
  if (!Array.isArray(body.output)) throw bad("the response has no output list");
  if (!body.output.every(isObject)) throw bad("an output item is not an object");
  return answeredBy(fromResponses(body.usage), body.model);
}
