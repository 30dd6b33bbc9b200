import type { ChatRequest, Part } from "../ir.ts";

/** What an image or a page costs, roughly, when only its bytes are known (Anthropic's rule: ~1,600 for a 1-megapixel image). */
const IMAGE_TOKENS = 1600;
/** OpenAI's rule of thumb: a few tokens of framing per message, and per reply. */
const PER_MESSAGE = 3;

let countText: ((text: string) => number) | undefined;
let loading: Promise<void> | undefined;

/**
 * Loads the tokenizer, once: cl100k (GPT-4's encoding). Neither Claude's tokenizer nor exactly
 * GPT-4o's (o200k), but within a few percent of both on prose, and half o200k's size in the binary
 * (+4.4 MB, not +9.5 MB). Only what counts tokens loads it.
 */
export function loadTokenizer(): Promise<void> {
  return (loading ??= import("gpt-tokenizer/encoding/cl100k_base").then(({ countTokens }) => void (countText = countTokens)));
}

export const tokenizerLoaded = () => countText !== undefined;

/** The tokenizer estimate (as `count_tokens` gives it), once loaded. */
export async function estimateTokens(request: ChatRequest): Promise<number> {
  await loadTokenizer();
  return estimateLoaded(request);
}

/**
 * The estimate over the system text, the messages, tool calls, tool results and the tool
 * definitions, counted at once: the tokenizer must be loaded (`loadTokenizer`).
 */
export function estimateLoaded(request: ChatRequest): number {
  const count = countText;
  if (!count) throw new Error("estimateLoaded before loadTokenizer");
  const text = (value: string) => (value ? count(value) : 0);
  const part = (p: Part): number => {
    switch (p.type) {
      case "text":
        return text(p.text);
      case "image":
      case "image_url":
        return IMAGE_TOKENS;
      case "document":
        return Math.ceil((p.data.length * 3) / 4 / 4);
      case "tool_call":
        return text(p.name) + text(p.arguments);
      case "tool_result":
        return text(p.content);
      case "reasoning":
        return text(p.text);
    }
  };
  let total = PER_MESSAGE;
  for (const system of request.system) total += text(system) + PER_MESSAGE;
  for (const message of request.messages) total += PER_MESSAGE + message.content.reduce((n, p) => n + part(p), 0);
  for (const tool of request.tools ?? []) total += text(JSON.stringify({ name: tool.name, description: tool.description, input_schema: tool.parameters }));
  return total;
}
