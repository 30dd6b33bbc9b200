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
  return (loading ??= import("gpt-tokenizer/encoding/cl100k_base").then(({ countTokens }) => void (countText = (text) => inPieces(text, countTokens))));
}

/**
 * Characters in a row without a space that are counted as one piece. BPE's work grows faster than
 * the square of a word's length: 100,000 letters in a row took 67 s, with every other request
 * waiting on the event loop (any key could send them, and a budget or a `when` counts every
 * request's input). A longer run is counted RUN characters at a time, each cut adding at most a
 * token; prose and code, whose words are shorter, are counted as before.
 */
const RUN = 128;

/** `count` over the text, cut after every RUN characters in a row that are not whitespace: linear in the text's length. */
export function inPieces(text: string, count: (text: string) => number): number {
  if (text.length <= RUN) return count(text);
  let total = 0;
  let from = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 32 || code === 10 || code === 9 || code === 13) {
      run = 0;
      continue;
    }
    // A cut never splits a surrogate pair: it waits for the pair's second half.
    if (++run < RUN || (code >= 0xd800 && code <= 0xdbff)) continue;
    total += count(text.slice(from, i + 1));
    from = i + 1;
    run = 0;
  }
  return from === text.length ? total : total + count(text.slice(from));
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
