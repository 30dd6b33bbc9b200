import type { Config } from "../config.ts";
import { GatewayError } from "../errors.ts";
import type { ChatRequest } from "../ir.ts";
import { estimateTokens, loadTokenizer } from "./estimate.ts";
import type { Dialect } from "./provider.ts";
import type { Live } from "./live.ts";

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
 * Token counts: the upstream's own where its provider can count the client's body (Bedrock Claude's
 * CountTokens), else, or when that fails, the tokenizer estimate (`estimate: true`).
 */
export function createTokenCounter(config: Pick<Config, "defaultModel">, upstreams: Live) {
  return async function count({ request, raw, dialect, headers, signal, key, endpoint }: CountCall): Promise<{ tokens: number; estimate: boolean }> {
    const { router, providers } = upstreams.current();
    const requested = request.model ?? config.defaultModel;
    // Counted where the request itself would go.
    if (router.countsTokens) await loadTokenizer();
    const route = requested ? router(requested, { request, headers, key, endpoint }).targets[0] : undefined;
    const provider = route ? await providers(route.upstream).catch(() => undefined) : undefined;
    const counter = provider?.countTokens?.[dialect];
    if (route && provider && counter && (provider.takesNative?.(dialect, route.model) ?? true)) {
      try {
        return { tokens: await counter({ body: raw, model: route.model, requested: requested!, stream: false, signal, headers }), estimate: false };
      } catch (error) {
        if (signal.aborted) throw error;
        if (!(error instanceof GatewayError)) throw error;
      }
    }
    return { tokens: await estimateTokens(request), estimate: true };
  };
}

export type TokenCounter = ReturnType<typeof createTokenCounter>;
