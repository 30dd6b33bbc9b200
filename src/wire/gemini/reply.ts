import { isObject, parseArguments, stringOr, type Json } from "../../lib/read.ts";
import type { ChatReply, Part } from "../../ir.ts";
import { randomId } from "../codec.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";
import { fromFinishReason, toFinishReason } from "./finish-reason.ts";
import { decodePart } from "./parts.ts";
import { carriedSignature, recalledSignature } from "./signatures.ts";
import { fromGemini, toGemini } from "./usage.ts";

/** A whole `GenerateContentResponse`: read from an upstream into the IR, written from the IR for a client. */

export function decodeReply(body: unknown, up: Upstream): ChatReply {
  const bad = (what: string) => badShape(up, what, JSON.stringify(body));
  if (!isObject(body)) throw bad("a reply that is not an object");
  const candidates = body.candidates ?? [];
  if (!Array.isArray(candidates)) throw bad("candidates is not a list");
  const usage = fromGemini(body.usageMetadata);
  const id = stringOr(body.responseId);
  const candidate = candidates[0];
  if (candidate === undefined) {
    // A prompt Gemini refused to answer: no candidate, the reason in promptFeedback.
    const feedback = isObject(body.promptFeedback) ? stringOr(body.promptFeedback.blockReason) : undefined;
    if (!feedback) throw bad("no candidate and no block reason");
    return { id, content: [], finish: { reason: "content_filter", raw: feedback }, usage };
  }
  if (!isObject(candidate)) throw bad("a candidate that is not an object");
  const parts = isObject(candidate.content) ? (candidate.content.parts ?? []) : [];
  if (!Array.isArray(parts)) throw bad("content.parts is not a list");
  const content = parts.flatMap((part) => decodePart(part, bad));
  const finish = fromFinishReason(stringOr(candidate.finishReason), content.some((p) => p.type === "tool_call"));
  return { id, content, finish, ...(usage ? { usage } : {}) };
}

/** The IR's parts as a model turn's parts: a carried signature on the part after it, a call's remembered one on the call. */
export function encodeParts(content: Part[]): Json[] {
  const parts: Json[] = [];
  let pending: string | undefined;
  for (const part of content) {
    const carried = carriedSignature(part);
    if (carried !== undefined) {
      pending = carried;
      continue;
    }
    const encoded = modelPart(part);
    if (!encoded) continue;
    const signature = pending ?? (part.type === "tool_call" ? recalledSignature(part.id) : undefined);
    pending = undefined;
    parts.push(signature === undefined ? encoded : { ...encoded, thoughtSignature: signature });
  }
  // A signature with nothing after it (Gemini sends the last one on an empty text part).
  if (pending !== undefined) parts.push({ text: "", thoughtSignature: pending });
  return parts;
}

function modelPart(part: Part): Json | undefined {
  switch (part.type) {
    case "text":
      return part.text ? { text: part.text } : undefined;
    case "reasoning":
      return part.text ? { text: part.text, thought: true } : undefined;
    case "tool_call":
      return { functionCall: { id: part.id, name: part.name, args: parseArguments(part.arguments, "the reply") } };
    default:
      return undefined;
  }
}

export function encodeReply(reply: ChatReply, model: string): Json {
  return {
    candidates: [{ content: { role: "model", parts: encodeParts(reply.content) }, finishReason: toFinishReason(reply.finish), index: 0 }],
    usageMetadata: toGemini(reply.usage),
    modelVersion: model,
    responseId: reply.id ?? randomId(""),
  };
}
