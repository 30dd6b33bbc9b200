import type { Usage } from "../../ir.ts";
import { isObject, memberObject, numberOr, type Json } from "../../lib/read.ts";

/**
 * Gemini's `usageMetadata`: `promptTokenCount` counts the whole prompt, the cached part included
 * (`cachedContentTokenCount` says how much of it was read from the cache; Gemini writes no cache
 * on its own); `toolUsePromptTokenCount` is prompt too. The answer is `candidatesTokenCount`, and
 * the thinking `thoughtsTokenCount` beside it, billed as output.
 */

const count = (value: unknown) => numberOr(value) ?? 0;

export function fromGemini(u: unknown): Usage | undefined {
  if (!isObject(u)) return undefined;
  return {
    input: { total: count(u.promptTokenCount) + count(u.toolUsePromptTokenCount), cacheRead: count(u.cachedContentTokenCount), cacheWrite: 0 },
    output: count(u.candidatesTokenCount) + count(u.thoughtsTokenCount),
  };
}

/** The IR's usage as Gemini writes it; a cache write has no field of its own and stays in the prompt. */
export function toGemini(usage: Partial<Usage> | undefined): Json {
  const prompt = usage?.input?.total ?? 0;
  const output = usage?.output ?? 0;
  const cached = usage?.input?.cacheRead ?? 0;
  return { promptTokenCount: prompt, candidatesTokenCount: output, totalTokenCount: prompt + output, ...(cached ? { cachedContentTokenCount: cached } : {}) };
}

/** Token counts at the end of a stream passed through: the last event's `usageMetadata` (each event counts all so far). */
export function usageIn(tail: string): Usage | undefined {
  const at = tail.lastIndexOf('"usageMetadata"');
  const object = at >= 0 ? memberObject(tail, "usageMetadata", at) : undefined;
  if (!object) return undefined;
  try {
    return fromGemini(JSON.parse(object));
  } catch {
    return undefined;
  }
}
