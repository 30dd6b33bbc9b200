import { Elysia } from "elysia";
import type { Chat } from "../../chat.ts";
import { invalidRequest } from "../../errors.ts";
import { isObject } from "../../formats/read.ts";
import { droppedTools, responses } from "../../formats/responses.ts";
import { auth, type Guard } from "../auth.ts";
import { note } from "../edge.ts";
import { reply } from "../reply.ts";

export const DROPPED_TOOLS = "x-parley-dropped-tools";

const DESCRIPTION = `The OpenAI Responses API, stateless. OpenAI models get the body as sent and answer byte for
byte; other models are answered through a conversion (function tools, messages, function calls and their
outputs), where tools only OpenAI runs (web_search, file_search, custom, namespace, ...) are dropped and
named in x-parley-dropped-tools, and previous_response_id is refused (send the whole input).`;

export function responsesRoutes(chat: Chat, guard: Guard) {
  return new Elysia({ name: "parley/responses" })
    .use(auth(guard))
    .post(
      "/v1/responses",
      async ({ request, set }) => {
        const raw = await request.text();
        const headers = set.headers as Record<string, string>;
        const body = parseJson(raw);
        if (!isObject(body)) throw invalidRequest("The request body must be a JSON object.");
        const outcome = await chat({
          input: responses, output: responses, body, raw, signal: request.signal, observe: (info) => note(set, info), onBreak: (broken) => note(set, { broken }),
        });
        // Passed through (the upstream's own bytes), nothing was dropped: OpenAI runs its own tools.
        const converted = outcome.kind === "json" || outcome.kind === "events";
        const dropped = converted ? droppedTools(body) : [];
        if (dropped.length) headers[DROPPED_TOOLS] = dropped.join(", ");
        return reply(outcome, headers);
      },
      {
        scope: "chat",
        parse: "none",
        detail: {
          summary: "OpenAI Responses API (stateless)",
          description: DESCRIPTION,
          tags: ["chat"],
          requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
        },
      },
    );
}

function parseJson(raw: string): unknown {
  if (raw.trim() === "") throw invalidRequest("The request body is empty; send a JSON object.");
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw invalidRequest("The request body is not valid JSON.", error instanceof Error ? error.message : undefined);
  }
}
