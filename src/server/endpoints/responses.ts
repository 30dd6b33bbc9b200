import { droppedTools, responses as codec } from "../../wire/responses/codec.ts";
import type { ChatEndpoint } from "../edge/endpoint.ts";

export const DROPPED_TOOLS = "x-parley-dropped-tools";

const DESCRIPTION = `The OpenAI Responses API, stateless. OpenAI models get the body as sent and answer byte for
byte; other models are answered through a conversion (function tools, messages, function calls and their
outputs), where tools only OpenAI runs (web_search, file_search, custom, namespace, ...) are dropped and
named in x-parley-dropped-tools, and previous_response_id is refused (send the whole input).`;

/** `POST /v1/responses`, for Codex CLI and the AI SDK. */
export const responses: ChatEndpoint = {
  kind: "chat",
  method: "POST",
  path: "/v1/responses",
  scope: "chat",
  errors: "openai",
  framing: "sse",
  call: () => ({ input: codec, output: codec }),
  decorate(outcome, body, headers) {
    // Passed through (the upstream's own bytes), nothing was dropped: OpenAI runs its own tools.
    const converted = outcome.kind === "json" || outcome.kind === "events";
    const dropped = converted ? droppedTools(body) : [];
    if (dropped.length) headers[DROPPED_TOOLS] = dropped.join(", ");
  },
  openapi: {
    summary: "OpenAI Responses API (stateless)",
    description: DESCRIPTION,
    tags: ["chat"],
    requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
  },
};
