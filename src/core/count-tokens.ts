import { GatewayError } from "../errors.ts";
import type { ChatRequest } from "../ir.ts";
import { takesNative, type Dialect, type Provider } from "../providers/provider.ts";
import { estimateTokens } from "../routing/estimate.ts";
import type { Live } from "../routing/live.ts";
import type { Target } from "../routing/routes.ts";
import type { Access } from "./access.ts";
import type { CoreOptions } from "./chat.ts";
import { createLoop, type Observed } from "./loop.ts";

export interface CountCall {
  request: ChatRequest;
  /** The body as the client sent it, for an upstream that counts it itself. */
  raw: string;
  dialect: Dialect;
  headers: Headers;
  signal: AbortSignal;
  /** The API key's label, and the endpoint the counted request will go to: routes' `when` reads them. */
  key?: string;
  endpoint?: string;
  /** What the key may reach (a count holds no budget). */
  access?: Access;
  /** Told where the request went (or would go, when the estimate answers), as a chat's log line is. */
  observe?: (info: Observed) => void;
}

export interface Count {
  tokens: number;
  /** The tokenizer's estimate, not an upstream's count. */
  estimate: boolean;
  /** Where an upstream's count came from: the x-parley-* headers, as a chat's answer has them. */
  headers?: Record<string, string>;
}

/** The route's upstream cannot count this request (no count of its own, or not for this model): the estimate answers. */
const UNCOUNTABLE = new Error("no upstream count for this request");

/**
 * Token counts, where the request itself would go, through the same loop as a chat (loop.ts):
 * the upstream's own count where its provider can count the client's body (the Anthropic API's
 * count_tokens, Bedrock Claude's CountTokens), retried with backoff, failing over to the next
 * target (Anthropic overloaded: Bedrock counts) and keeping cooldowns; else, or when the calls
 * fail, the tokenizer estimate (`estimate: true`). It is not a completion: no usage record.
 */
export function createTokenCounter(config: Pick<CoreOptions, "defaultModel" | "modelFallbacks">, upstreams: Live) {
  const loop = createLoop({ modelFallbacks: config.modelFallbacks, upstreams });
  return async function count({ request, raw, dialect, headers, signal, key, endpoint, access, observe }: CountCall): Promise<Count> {
    const requested = request.model ?? config.defaultModel;
    if (requested) {
      const answer = async (provider: Provider, target: Target) => {
        const counter = provider.countTokens?.[dialect];
        if (!counter || !takesNative(provider, dialect, target.model, request.model, request.needsNative !== undefined)) throw UNCOUNTABLE;
        return { tokens: await counter({ body: raw, model: target.model, requested, stream: false, signal, headers }) };
      };
      // Routed nowhere (an unknown model): that 404 stands; any failure after it, the estimate answers.
      let routed = false;
      try {
        // A count is no turn of a session: it neither follows one nor moves it (`session: null`).
        const counted = await loop<{ tokens: number; headers?: Record<string, string> }>({
          requested, facts: { request, headers, key, endpoint, session: null }, signal, access, answer, observe: (o) => {
            routed = o.provider !== "-";
            observe?.(o);
          },
        });
        return { tokens: counted.tokens, estimate: false, headers: counted.headers };
      } catch (error) {
        if (signal.aborted || !routed || (error !== UNCOUNTABLE && !(error instanceof GatewayError))) throw error;
      }
    }
    return { tokens: await estimateTokens(request), estimate: true };
  };
}

export type TokenCounter = ReturnType<typeof createTokenCounter>;
