import { randomId } from "../codec.ts";
import { isObject, stringOr, type Json } from "../../lib/read.ts";
import type { Part } from "../../ir.ts";
import { MADE_UP_ID } from "./encode-request.ts";
import { rememberSignature, signaturePart } from "./signatures.ts";

/** One part of a Gemini reply (or a Gemini client's model turn) -> IR parts, its signature carried before it. */

export function decodePart(part: unknown, bad: (what: string) => Error): Part[] {
  if (!isObject(part)) throw bad("a part that is not an object");
  const signature = stringOr(part.thoughtSignature);
  const carrier = signature ? [signaturePart(signature)] : [];
  if (isObject(part.functionCall)) {
    const call = callOf(part.functionCall, bad);
    if (signature) rememberSignature(call.id, signature);
    return [...carrier, call];
  }
  if (typeof part.text === "string") {
    if (part.thought === true) return [...carrier, ...(part.text ? [{ type: "reasoning" as const, text: part.text }] : [])];
    return [...carrier, ...(part.text ? [{ type: "text" as const, text: part.text }] : [])];
  }
  // Images made by the model, code run by Gemini's own tools: nothing the IR's reply carries.
  return carrier;
}

export function callOf(call: Json, bad: (what: string) => Error): Extract<Part, { type: "tool_call" }> {
  const name = stringOr(call.name);
  if (!name) throw bad("a function call without a name");
  if (call.args !== undefined && call.args !== null && !isObject(call.args)) throw bad("a function call whose args are not an object");
  return { type: "tool_call", id: stringOr(call.id) || randomId(MADE_UP_ID), name, arguments: JSON.stringify(call.args ?? {}) };
}
