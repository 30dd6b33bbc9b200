import { Elysia } from "elysia";
import type { Chat } from "../../chat.ts";
import { droppedTools, responses } from "../../formats/responses.ts";
import { trackUsage } from "../../usage/track.ts";
import { auth, type Guard } from "../auth.ts";
import { jsonObject } from "../body.ts";
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
      async ({ request, set, principal }) => {
        const usage = trackUsage(guard.usage, { set, request, principal }, "/v1/responses");
        const raw = await request.text();
        const headers = set.headers as Record<string, string>;
        const body = jsonObject(raw);
        const outcome = await chat({ input: responses, output: responses, body, raw, signal: request.signal, ...usage.hooks }).then(usage.answered, usage.failed);
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
