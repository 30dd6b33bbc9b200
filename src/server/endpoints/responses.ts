import { droppedTools, responses as codec } from "../../wire/responses/codec.ts";
import { compact, compaction, madeByParley } from "../../wire/responses/compaction.ts";
import { GatewayError } from "../../errors.ts";
import { isObject, type Json } from "../../lib/read.ts";
import type { ChatEndpoint, PlainEndpoint } from "../edge/endpoint.ts";

export const DROPPED_TOOLS = "x-parley-dropped-tools";

const DESCRIPTION = `The OpenAI Responses API, stateless. OpenAI models get the body as sent and answer byte for
byte; other models are answered through a conversion (function tools, messages, function calls and their
outputs), where tools only OpenAI runs (web_search, file_search, custom, namespace, ...) are dropped and
named in x-parley-dropped-tools, and previous_response_id is refused (send the whole input).`;

const converted = { ...codec, dialect: undefined };
const isTrigger = (body: Json) => Array.isArray(body.input) && isObject(body.input.at(-1)) && body.input.at(-1).type === "compaction_trigger";

/** `POST /v1/responses`, for Codex CLI and the AI SDK. */
export const responses: ChatEndpoint = {
  kind: "chat",
  method: "POST",
  path: "/v1/responses",
  scope: "chat",
  errors: "openai",
  framing: "sse",
  call: (body) => {
    // Codex's compaction: passed through only to a server that compacts (see compaction.ts).
    if (isTrigger(body)) return { input: compaction, output: compaction };
    // A conversation parley compacted holds its summary, which only parley can read: never passed through as sent.
    if (madeByParley(body)) return { input: converted, output: converted };
    return { input: codec, output: codec };
  },
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

/**
 * `GET /v1/responses` with `Upgrade: websocket`: Codex tries the Responses API over a WebSocket
 * first. parley serves it over HTTP only, and says so with a 426, on which Codex falls back to
 * `POST /v1/responses` at once; a 404 or 405 costs it seven attempts (~7 s a session), a 400 makes
 * it exit (contract 26). Keyed as every /v1 route is (contract 4): Codex sends its key with the attempt.
 */
export const responsesWebSocket: PlainEndpoint = {
  kind: "plain",
  method: "GET",
  path: "/v1/responses",
  scope: "chat",
  errors: "openai",
  answer({ request }) {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") throw new GatewayError(405, "invalid_request_error", "GET /v1/responses is not served: send POST /v1/responses.");
    throw new GatewayError(426, "invalid_request_error", "parley serves the Responses API over HTTP, not WebSocket: send POST /v1/responses.", { headers: { connection: "close" } });
  },
  openapi: { summary: "Responses over WebSocket: answered 426, so that clients (Codex) use POST at once", tags: ["chat"] },
};

/**
 * `POST /v1/responses/compact`: a conversation compacted, OpenAI's `response.compaction` object.
 * Passed through to a server that compacts; elsewhere the model writes the summary (contract 26).
 */
export const responsesCompact: ChatEndpoint = {
  kind: "chat",
  method: "POST",
  path: "/v1/responses/compact",
  scope: "chat",
  errors: "openai",
  framing: "sse",
  call: (body) => {
    const codec = compact(body);
    return { input: codec, output: codec };
  },
  openapi: {
    summary: "Compact a Responses conversation",
    description: "OpenAI's /v1/responses/compact: the user messages, then one compaction item. Passed through to OpenAI; other models write a summary, sealed in the item, that /v1/responses expands when the item comes back.",
    tags: ["chat"],
    requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
  },
};
