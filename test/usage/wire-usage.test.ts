import { describe, expect, test } from "bun:test";
import { fromResponses, toResponses } from "../../src/wire/responses/usage.ts";
import { fromOpenAIChat, toOpenAIChat } from "../../src/wire/openai-chat/usage.ts";
import { fromAnthropic, fromInvocationMetrics, toAnthropic } from "../../src/wire/anthropic/usage.ts";

/**
 * One prompt of 1,210 tokens, 1,000 of them read from the cache and 200 written to it, and 5
 * output tokens, as each vendor writes it (the payloads' shapes as their APIs send them).
 */
const USAGE = { input: { total: 1210, cacheRead: 1000, cacheWrite: 200 }, output: 5 };

const ANTHROPIC = { input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 1000, output_tokens: 5 };
const BEDROCK_METRICS = { inputTokenCount: 10, outputTokenCount: 5, invocationLatency: 3037, firstByteLatency: 2635, cacheReadInputTokenCount: 1000, cacheWriteInputTokenCount: 200 };
const OPENAI_CHAT = { prompt_tokens: 1210, completion_tokens: 5, total_tokens: 1215, prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 200, audio_tokens: 0 } };
const RESPONSES = { input_tokens: 1210, input_tokens_details: { cached_tokens: 1000, cache_write_tokens: 200 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1215 };

describe("each dialect's usage, read and written with its own cache convention", () => {
  test("Anthropic counts the cache beside input_tokens", () => {
    expect(fromAnthropic(ANTHROPIC)).toEqual(USAGE);
    expect(toAnthropic(USAGE)).toEqual(ANTHROPIC);
  });

  test("Bedrock's invocation metrics count it beside inputTokenCount", () => {
    expect(fromInvocationMetrics(BEDROCK_METRICS)).toEqual(USAGE);
  });

  test("OpenAI Chat Completions counts it inside prompt_tokens", () => {
    expect(fromOpenAIChat(OPENAI_CHAT)).toEqual(USAGE);
    expect(toOpenAIChat(USAGE)).toMatchObject({ prompt_tokens: 1210, completion_tokens: 5, total_tokens: 1215, prompt_tokens_details: { cached_tokens: 1000 } });
  });

  test("the Responses API counts it inside input_tokens", () => {
    expect(fromResponses(RESPONSES)).toEqual(USAGE);
    expect(toResponses(USAGE)).toEqual(RESPONSES);
  });

  test("no cache reported: all of the input is uncached; no usage object: none", () => {
    expect(fromAnthropic({ input_tokens: 13, output_tokens: 5 })).toEqual({ input: { total: 13, cacheRead: 0, cacheWrite: 0 }, output: 5 });
    expect(fromOpenAIChat({ prompt_tokens: 11, completion_tokens: 7 })).toEqual({ input: { total: 11, cacheRead: 0, cacheWrite: 0 }, output: 7 });
    expect(fromOpenAIChat(null)).toBeUndefined();
    expect(fromResponses(undefined)).toBeUndefined();
  });
});
