import type { InputTokens, Usage } from "../ir.ts";

/**
 * The IR's usage as a stream reports it. Each dialect reads and writes its own usage object in its
 * wire module (usage.ts in each folder of src/wire/): OpenAI's prompt tokens include the cached ones and say how
 * many were; Anthropic's and Bedrock's input tokens leave the cache out and count it beside.
 */

export const NO_INPUT: InputTokens = { total: 0, cacheRead: 0, cacheWrite: 0 };

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
