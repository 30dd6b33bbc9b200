import type { InputTokens, Usage } from "../ir.ts";

/**
 * The IR's usage as a stream reports it. Each dialect reads and writes its own usage object in its
 * wire module (usage.ts in each folder of src/wire/): OpenAI's prompt tokens include the cached ones and say how
 * many were; Anthropic's and Bedrock's input tokens leave the cache out and count it beside.
 */

export const NO_INPUT: InputTokens = { total: 0, cacheRead: 0, cacheWrite: 0 };

/**
 * Usage with the model a reply says answered it (its `model` member), read where the usage is read:
 * an OpenAI-compatible server answers with the model it runs, whatever it was asked for (llama.cpp,
 * LM Studio). Claude replies are not read for it: Anthropic and Bedrock answer as the model called,
 * and every path of theirs then records one id.
 */
export function answeredBy(usage: Usage | undefined, model: unknown): Usage | undefined {
  return usage && typeof model === "string" && model ? { ...usage, model } : usage;
}

/** Usage as it trickles in over a stream: the input at the start or the end, the output at the end. */
export function usageTracker() {
  const reported: Partial<Usage> = {};
  return {
    reported,
    add(usage: Partial<Usage> | undefined) {
      if (usage?.input) reported.input = usage.input;
      if (usage?.output !== undefined) reported.output = usage.output;
      if (usage?.model) reported.model = usage.model;
    },
    /** All of it, a half not reported as 0; undefined when nothing was. */
    usage: (): Usage | undefined =>
      reported.input || reported.output !== undefined ? answeredBy({ input: reported.input ?? NO_INPUT, output: reported.output ?? 0 }, reported.model) : undefined,
  };
}
