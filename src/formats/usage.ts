import type { InputTokens, Usage } from "../ir.ts";
import { isObject, numberOr } from "./read.ts";

/**
 * Each dialect's usage object, read into the IR's `Usage` and written from it. The dialects count
 * the prompt cache two ways: OpenAI's prompt tokens include the cached ones and say how many were;
 * Anthropic's and Bedrock's input tokens leave the cache out and count it beside.
 */

const count = (value: unknown) => numberOr(value) ?? 0;
export const NO_INPUT: InputTokens = { total: 0, cacheRead: 0, cacheWrite: 0 };

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

/** Usage as it trickles in over a stream: the input at the start or the end, the output at the end. */
export function usageTracker() {
  const reported: Partial<Usage> = {};
  return {
    reported,
    add(usage: Partial<Usage> | undefined) {
      if (usage?.input) reported.input = usage.input;
      if (usage?.output !== undefined) reported.output = usage.output;
    },
    /** All of it, a half not reported as 0; undefined when nothing was. */
    usage: (): Usage | undefined =>
      reported.input || reported.output !== undefined ? { input: reported.input ?? NO_INPUT, output: reported.output ?? 0 } : undefined,
  };
}
