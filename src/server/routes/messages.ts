import { Elysia } from "elysia";
import type { Chat } from "../../chat.ts";
import { invalidRequest } from "../../errors.ts";
import { anthropic } from "../../formats/anthropic.ts";
import { isObject, type Json } from "../../formats/read.ts";
import type { TokenCounter } from "../../providers/tokens.ts";
import { auth, type Guard } from "../auth.ts";
import { note, REQUEST_ID } from "../edge.ts";
import { reply } from "../reply.ts";

const DESCRIPTION = `The Anthropic Messages API as api.anthropic.com serves it, for Claude Code and the Anthropic SDKs
(x-api-key or Bearer; anthropic-version and anthropic-beta headers; ?beta=true accepted). Claude models on
Bedrock get the body as sent (lossless); other models go through parley's conversion.`;

export function messagesRoutes(chat: Chat, guard: Guard, count: TokenCounter) {
  return new Elysia({ name: "parley/messages" })
    .use(auth(guard))
    .post(
      "/v1/messages",
      async ({ request, set }) => {
        const headers = set.headers as Record<string, string>;
        headers["request-id"] = headers[REQUEST_ID]!;
        const raw = await request.text();
        const body = readBody(raw);
        const outcome = await chat({
          input: anthropic, output: anthropic, body, raw, headers: request.headers, signal: request.signal,
          observe: (info) => note(set, info), onBreak: (broken) => note(set, { broken }),
        });
        return reply(outcome, headers);
      },
      { scope: "chat", parse: "none", detail: { summary: "Anthropic Messages", description: DESCRIPTION, tags: ["chat"], requestBody: jsonBody } },
    )
    .post(
      "/v1/messages/count_tokens",
      async ({ request, set }) => {
        const headers = set.headers as Record<string, string>;
        headers["request-id"] = headers[REQUEST_ID]!;
        const raw = await request.text();
        const body = readBody(raw);
        // A count needs no max_tokens; the decoder, written for messages, does.
        const decoded = anthropic.decodeRequest({ ...body, max_tokens: body.max_tokens ?? 1 });
        const { tokens, estimate } = await count({ request: decoded, raw, dialect: "anthropic-messages", headers: request.headers, signal: request.signal });
        if (estimate) headers["x-parley-token-count"] = "estimate";
        return { input_tokens: tokens };
      },
      {
        scope: "chat", parse: "none",
        detail: { summary: "Count the input tokens of a Messages request", description: "Bedrock's CountTokens for Claude; elsewhere a tokenizer estimate, marked x-parley-token-count: estimate.", tags: ["chat"], requestBody: jsonBody },
      },
    );
}

const jsonBody = { required: true, content: { "application/json": { schema: { type: "object" } } } } as const;

function readBody(raw: string): Json {
  if (raw.trim() === "") throw invalidRequest("The request body is empty; send a JSON object.");
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (error) {
    throw invalidRequest("The request body is not valid JSON.", error instanceof Error ? error.message : undefined);
  }
  if (!isObject(body)) throw invalidRequest("The request body must be a JSON object.");
  return body;
}
