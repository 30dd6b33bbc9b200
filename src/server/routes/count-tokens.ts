import { Elysia } from "elysia";
import { anthropic } from "../../wire/anthropic/codec.ts";
import type { TokenCounter } from "../../core/count-tokens.ts";
import { auth, type Guard } from "../auth.ts";
import { jsonObject } from "../body.ts";
import { REQUEST_ID } from "../edge.ts";

/** `POST /v1/messages/count_tokens`: the Anthropic API's count or Bedrock's CountTokens for Claude, else a tokenizer's estimate. */
export function countTokensRoutes(guard: Guard, count: TokenCounter) {
  return new Elysia({ name: "parley/count-tokens" })
    .use(auth(guard))
    .post(
      "/v1/messages/count_tokens",
      async ({ request, set, principal }) => {
        const headers = set.headers as Record<string, string>;
        headers["request-id"] = headers[REQUEST_ID]!;
        const raw = await request.text();
        const body = jsonObject(raw);
        // A count needs no max_tokens; the decoder, written for messages, does.
        const decoded = anthropic.decodeRequest({ ...body, max_tokens: body.max_tokens ?? 1 });
        const { tokens, estimate } = await count({ request: decoded, raw, dialect: "anthropic-messages", headers: request.headers, signal: request.signal, key: principal.label, endpoint: "/v1/messages" });
        if (estimate) headers["x-parley-token-count"] = "estimate";
        return { input_tokens: tokens };
      },
      {
        scope: "chat", parse: "none",
        detail: {
          summary: "Count the input tokens of a Messages request", tags: ["chat"],
          description: "The Anthropic API's own count, or Bedrock's CountTokens, for Claude; elsewhere a tokenizer estimate, marked x-parley-token-count: estimate.",
          requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
        },
      },
    );
}
