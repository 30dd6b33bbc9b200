import { anthropic } from "../../wire/anthropic/codec.ts";
import type { ChatEndpoint } from "../edge/endpoint.ts";

const DESCRIPTION = `The Anthropic Messages API as api.anthropic.com serves it, for Claude Code and the Anthropic SDKs
(x-api-key or Bearer; anthropic-version and anthropic-beta headers; ?beta=true accepted). Claude models on
the Anthropic API or Bedrock get the body as sent (lossless), the Anthropic API first and Bedrock when it is
overloaded; other models go through parley's conversion.`;

/** `POST /v1/messages`, for Claude Code and the Anthropic SDKs. */
export const messages: ChatEndpoint = {
  kind: "chat",
  method: "POST",
  path: "/v1/messages",
  scope: "chat",
  errors: "anthropic",
  framing: "sse",
  call: (_body, request) => ({ input: anthropic, output: anthropic, headers: request.headers }),
  openapi: {
    summary: "Anthropic Messages",
    description: DESCRIPTION,
    tags: ["chat"],
    requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
  },
};
