import type { Config } from "../config.ts";
import { GatewayError } from "../errors.ts";
import type { ChatRequest } from "../ir.ts";
import { estimateTokens, loadTokenizer } from "../routing/estimate.ts";
import { takesNative, type Dialect } from "../providers/provider.ts";
import type { Live } from "../routing/live.ts";
import { ordered } from "../routing/routes.ts";

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
}

/**
 * Token counts: the upstream's own where its provider can count the client's body (the Anthropic
 * API's count_tokens, Bedrock Claude's CountTokens), trying the route's targets in order while each
 * can (Anthropic overloaded: Bedrock counts); else, or when none could, the tokenizer estimate
 * (`estimate: true`).
 */
export function createTokenCounter(config: Pick<Config, "defaultModel">, upstreams: Live) {
  return async function count({ request, raw, dialect, headers, signal, key, endpoint }: CountCall): Promise<{ tokens: number; estimate: boolean }> {
    const { router, providers } = upstreams.current();
    const requested = request.model ?? config.defaultModel;
    // Counted where the request itself would go.
    if (router.countsTokens) await loadTokenizer();
    const targets = requested ? ordered(router(requested, { request, headers, key, endpoint }), upstreams.cooldowns.cooling) : [];
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
