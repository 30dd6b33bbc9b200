import { Elysia } from "elysia";
import type { Chat } from "../../chat.ts";
import { CODECS, detectFormat, formatName } from "../../formats/detect.ts";
import { trackUsage } from "../../usage/track.ts";
import { auth, type Guard } from "../auth.ts";
import { jsonObject } from "../body.ts";
import { reply } from "../reply.ts";

const DESCRIPTION = `One endpoint, three request formats: OpenAI Chat Completions (alpha), Anthropic Messages
(beta_messages, detected by anthropic_version / vendor_version or Anthropic-only fields) and Titan Text
(beta_textgen, detected by inputText). Routed by model id; answered in ?target_format= (default alpha).
With "stream": true the reply is Server-Sent Events.`;

export function chatRoutes(chat: Chat, guard: Guard) {
  return new Elysia({ name: "parley/chat" })
    .use(auth(guard))
    .post(
      "/v1/chat/completions",
      async ({ request, query, set, principal }) => {
        const usage = trackUsage(guard.usage, { set, request, principal }, "/v1/chat/completions");
        const raw = await request.text();
        const headers = set.headers as Record<string, string>;
        const body = jsonObject(raw);
        const input = CODECS[detectFormat(body)];
        const output = query.target_format === undefined ? CODECS.alpha : CODECS[formatName(query.target_format)];
        const outcome = await chat({ input, output, body, raw, signal: request.signal, ...usage.hooks }).then(usage.answered, usage.failed);
        return reply(outcome, headers);
      },
      {
        scope: "chat",
        parse: "none",
        detail: {
          summary: "Chat completion in any of three formats",
          description: DESCRIPTION,
          tags: ["chat"],
          parameters: [{ name: "target_format", in: "query", required: false, schema: { type: "string", enum: ["alpha", "beta_messages", "beta_textgen"] } }],
          requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
        },
      },
    );
}
