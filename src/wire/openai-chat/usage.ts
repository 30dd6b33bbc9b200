import { answeredBy } from "../usage.ts";
import { isObject, numberOr } from "../../lib/read.ts";
import type { Usage } from "../../ir.ts";

const count = (value: unknown) => numberOr(value) ?? 0;

/** Chat Completions: `prompt_tokens` includes `cached_tokens` (and the `cache_write_tokens` some compatible servers report). */
export function fromOpenAIChat(u: unknown): Usage | undefined {
  if (!isObject(u)) return undefined;
  const details = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  return { input: { total: count(u.prompt_tokens), cacheRead: count(details.cached_tokens), cacheWrite: count(details.cache_write_tokens) }, output: count(u.completion_tokens) };
}

export const toOpenAIChat = ({ input, output }: Usage) => ({
  prompt_tokens: input.total, completion_tokens: output, total_tokens: input.total + output,
  ...(input.cacheRead ? { prompt_tokens_details: { cached_tokens: input.cacheRead } } : {}),
});

/** The usage chunk OpenAI sends before `[DONE]` when the client asked with `stream_options.include_usage`. */
export function usageIn(tail: string): Usage | undefined {
  const at = tail.lastIndexOf('"usage":{');
  if (at === -1) return undefined;
  const start = tail.lastIndexOf("data:", at);
  const end = tail.indexOf("\n", at);
  try {
    const chunk = JSON.parse(tail.slice(start + 5, end === -1 ? undefined : end));
    return answeredBy(fromOpenAIChat(chunk.usage), chunk.model);
  } catch {
    return undefined;
  }
}
