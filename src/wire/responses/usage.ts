import { answeredBy } from "../usage.ts";
import { isObject, numberOr } from "../../lib/read.ts";
import type { Usage } from "../../ir.ts";

const count = (value: unknown) => numberOr(value) ?? 0;

/** The Responses API: `input_tokens` includes the cached tokens, as Chat Completions' prompt tokens do. */
export function fromResponses(u: unknown): Usage | undefined {
  if (!isObject(u)) return undefined;
  const details = isObject(u.input_tokens_details) ? u.input_tokens_details : {};
  return { input: { total: count(u.input_tokens), cacheRead: count(details.cached_tokens), cacheWrite: count(details.cache_write_tokens) }, output: count(u.output_tokens) };
}

export const toResponses = ({ input, output }: Usage) => ({
  input_tokens: input.total,
  input_tokens_details: { cached_tokens: input.cacheRead, cache_write_tokens: input.cacheWrite },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: input.total + output,
});

/**
 * Token counts from the end of a stream passed through: the `response.completed` (or
 * `.incomplete`) event's response, when its data line is whole within the tail.
 */
export function usageIn(tail: string): Usage | undefined {
  const at = Math.max(tail.lastIndexOf("\nevent: response.completed"), tail.lastIndexOf("\nevent: response.incomplete"));
  const start = tail.indexOf("data:", at);
  if (at === -1 || start === -1) return undefined;
  const end = tail.indexOf("\n", start);
  try {
    const response = JSON.parse(tail.slice(start + 5, end === -1 ? undefined : end)).response;
    return answeredBy(fromResponses(response?.usage), response?.model);
  } catch {
    return undefined;
  }
}
