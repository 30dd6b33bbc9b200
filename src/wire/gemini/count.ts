import { isObject, numberOr, type Json } from "../../lib/read.ts";
import type { ChatRequest } from "../../ir.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";
import { encodeRequest } from "./encode-request.ts";

/**
 * `:countTokens`. The Gemini API counts a whole request given as `generateContentRequest` (with its
 * model); Vertex takes the request's fields at the top.
 */
export function encodeCount(request: ChatRequest, target: string, model: string, flat = false): Json {
  const body = encodeRequest(request, target, model);
  return flat ? body : { generateContentRequest: { model: `models/${model}`, ...body } };
}

export function decodeCount(body: unknown, up: Upstream): number {
  const tokens = isObject(body) ? numberOr(body.totalTokens) : undefined;
  if (tokens === undefined) throw badShape(up, "no totalTokens in the count", JSON.stringify(body));
  return tokens;
}

/** The count as a Gemini client reads it. */
export const encodeCountReply = (tokens: number): Json => ({ totalTokens: tokens });
