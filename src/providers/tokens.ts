import type { Config } from "../config.ts";
import { GatewayError } from "../errors.ts";
import type { ChatRequest, Part } from "../ir.ts";
import { takesNative, type Dialect } from "./provider.ts";
import type { Live } from "./live.ts";
import { ordered } from "./routes.ts";

/** What an image or a page costs, roughly, when only its bytes are known (Anthropic's rule: ~1,600 for a 1-megapixel image). */
const IMAGE_TOKENS = 1600;
/** OpenAI's rule of thumb: a few tokens of framing per message, and per reply. */
const PER_MESSAGE = 3;

/**
 * A tokenizer estimate: cl100k (GPT-4's encoding) over the system text, the messages, tool calls,
 * tool results and the tool definitions. Neither Claude's tokenizer nor exactly GPT-4o's (o200k),
 * but within a few percent of both on prose, and half o200k's size in the binary (+4.4 MB, not
 * +9.5 MB). Loaded on first use.
 */
export async function estimateTokens(request: ChatRequest): Promise<number> {
  const { countTokens } = await import("gpt-tokenizer/encoding/cl100k_base");
  const text = (value: string) => (value ? countTokens(value) : 0);
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

export interface CountCall {
  request: ChatRequest;
  /** The body as the client sent it, for an upstream that counts it itself. */
  raw: string;
  dialect: Dialect;
  headers: Headers;
  signal: AbortSignal;
}

/**
 * Token counts: the upstream's own where its provider can count the client's body (the Anthropic
 * API's count_tokens, Bedrock Claude's CountTokens), trying the route's targets in order while each
 * can (Anthropic overloaded: Bedrock counts); else, or when none could, the tokenizer estimate
 * (`estimate: true`).
 */
export function createTokenCounter(config: Pick<Config, "defaultModel">, upstreams: Live) {
  return async function count({ request, raw, dialect, headers, signal }: CountCall): Promise<{ tokens: number; estimate: boolean }> {
    const { router, providers } = upstreams.current();
    const requested = request.model ?? config.defaultModel;
    const targets = requested ? ordered(router(requested), upstreams.cooldowns.cooling) : [];
    for (const target of targets) {
      const provider = await providers(target.upstream).catch(() => undefined);
      const counter = provider?.countTokens?.[dialect];
      if (!provider || !counter || !takesNative(provider, dialect, target.model, request.model, request.needsNative !== undefined)) break;
      try {
        return { tokens: await counter({ body: raw, model: target.model, requested: requested!, stream: false, signal, headers }), estimate: false };
      } catch (error) {
        if (signal.aborted) throw error;
        if (!(error instanceof GatewayError)) throw error;
      }
    }
    return { tokens: await estimateTokens(request), estimate: true };
  };
}

export type TokenCounter = ReturnType<typeof createTokenCounter>;
