import { uncachedInput, type Usage } from "../../ir.ts";
import { isObject, memberObject, numberOr, type Json } from "../../lib/read.ts";
import { NO_INPUT } from "../usage.ts";

/**
 * Anthropic's usage object: `input_tokens` counts beside the cache, which it bills apart
 * (`cache_read_input_tokens`, `cache_creation_input_tokens`). The IR's input total includes it.
 */

const count = (value: unknown) => numberOr(value) ?? 0;

export function fromAnthropic(u: Json): Usage {
  const cacheRead = count(u.cache_read_input_tokens);
  const cacheWrite = count(u.cache_creation_input_tokens);
  return { input: { total: count(u.input_tokens) + cacheRead + cacheWrite, cacheRead, cacheWrite }, output: count(u.output_tokens) };
}

export function toAnthropic(usage: Partial<Usage> | undefined): Json {
  const input = usage?.input ?? NO_INPUT;
  return { input_tokens: uncachedInput(input), cache_creation_input_tokens: input.cacheWrite, cache_read_input_tokens: input.cacheRead, output_tokens: usage?.output ?? 0 };
}

/**
 * How a reply writes its usage. `apart` is Anthropic's own (input without the cache, cache reads
 * and writes beside it); `included` is the spec's beta_messages rule (contract 2): the input with its
 * cache, as `prompt_tokens` counts it, and no cache fields.
 */
export type CacheTokens = "apart" | "included";

/** The usage object of a whole reply, of message_start (no output yet) and of message_delta. */
export function usageObject(usage: Partial<Usage> | undefined, at: "reply" | "start" | "end", cache: CacheTokens): Json {
  if (cache === "apart") return at === "start" ? { ...toAnthropic(usage), output_tokens: 0 } : toAnthropic(usage);
  if (at === "end") return { output_tokens: usage?.output ?? 0, ...(usage?.input ? { input_tokens: usage.input.total } : {}) };
  return { input_tokens: usage?.input?.total ?? 0, output_tokens: at === "start" ? 0 : (usage?.output ?? 0) };
}

/** Bedrock's `amazon-bedrock-invocationMetrics` (a Claude stream's last chunk there): the cache counted beside the input, as Anthropic does. */
export function fromInvocationMetrics(m: Json): Usage {
  const cacheRead = count(m.cacheReadInputTokenCount);
  const cacheWrite = count(m.cacheWriteInputTokenCount);
  return { input: { total: count(m.inputTokenCount) + cacheRead + cacheWrite, cacheRead, cacheWrite }, output: count(m.outputTokenCount) };
}

/**
 * Token counts at the end of a stream passed through: Bedrock's invocation metrics on
 * message_stop, else message_delta's usage (output tokens, and input tokens where sent).
 */
export function usageIn(tail: string): Usage | undefined {
  const metrics = memberObject(tail, "amazon-bedrock-invocationMetrics");
  const m = metrics ? parseJson(metrics) : undefined;
  if (m) return fromInvocationMetrics(m);
  const delta = /"type"\s*:\s*"message_delta"/.exec(tail);
  const usage = delta ? memberObject(tail, "usage", delta.index) : undefined;
  const u = usage ? parseJson(usage) : undefined;
  return u ? fromAnthropic(u) : undefined;
}

function parseJson(text: string): Json | undefined {
  try {
    const value = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
