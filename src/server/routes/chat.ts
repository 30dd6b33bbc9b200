import { Elysia } from "elysia";
import type { Chat } from "../../chat.ts";
import { invalidRequest } from "../../errors.ts";
import { CODECS, detectFormat, formatName } from "../../formats/detect.ts";
import { isObject } from "../../formats/read.ts";
import { auth, type Guard } from "../auth.ts";
import { note } from "../edge.ts";
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
      async ({ request, query, set }) => {
        const raw = await request.text();
        const headers = set.headers as Record<string, string>;
        const body = parseJson(raw);
        if (!isObject(body)) throw invalidRequest("The request body must be a JSON object.");
        const input = CODECS[detectFormat(body)];
        const output = query.target_format === undefined ? CODECS.alpha : CODECS[formatName(query.target_format)];
        const outcome = await chat({
          input, output, body, raw, signal: request.signal, observe: (info) => note(set, info), onBreak: (broken) => note(set, { broken }),
        });
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

function parseJson(raw: string): unknown {
  if (raw.trim() === "") throw invalidRequest("The request body is empty; send a JSON object.");
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw invalidRequest("The request body is not valid JSON.", error instanceof Error ? error.message : undefined);
  }
}
