import { anthropic } from "../../wire/anthropic/codec.ts";
import type { TokenCounter } from "../../core/count-tokens.ts";
import type { Guard } from "../auth.ts";
import type { PlainEndpoint } from "../edge/endpoint.ts";

/** `POST /v1/messages/count_tokens`: the Anthropic API's count or Bedrock's CountTokens for Claude, else a tokenizer's estimate. */
export function countTokens(count: TokenCounter, access?: Guard["access"]): PlainEndpoint {
  return {
    kind: "plain",
    method: "POST",
    path: "/v1/messages/count_tokens",
    scope: "chat",
    errors: "anthropic",
    body: "json",
    async answer({ request, headers, principal, body, raw, log }) {
      // A count needs no max_tokens; the decoder, written for messages, does.
      const decoded = anthropic.decodeRequest({ ...body!, max_tokens: body!.max_tokens ?? 1 });
      const { tokens, estimate } = await count({ request: decoded, raw: raw!, dialect: "anthropic-messages", headers: request.headers, signal: request.signal, key: principal!.label, endpoint: "/v1/messages", access: access?.(principal!.key, raw!, false), observe: log && ((o) => log.note({ model: o.model, provider: o.provider, ...(o.route ? { route: o.route } : {}) })) });
      if (estimate) headers["x-parley-token-count"] = "estimate";
      return { input_tokens: tokens };
    },
    openapi: {
      summary: "Count the input tokens of a Messages request", tags: ["chat"],
      description: "The Anthropic API's own count, or Bedrock's CountTokens, for Claude; elsewhere a tokenizer estimate, marked x-parley-token-count: estimate.",
      requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
    },
  };
}
