import { Elysia, sse } from "elysia";
import type { Chat } from "../../chat.ts";
import { invalidRequest } from "../../errors.ts";
import { auth, type Guard } from "../auth.ts";
import { note, REQUEST_ID } from "../edge.ts";

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
        const outcome = await chat({
          body: parseJson(raw), raw, targetFormat: query.target_format, signal: request.signal,
          requestId: headers[REQUEST_ID], observe: (info) => note(set, info),
        });
        Object.assign(headers, outcome.headers);
        switch (outcome.kind) {
          case "json":
            return outcome.body;
          case "bytes":
            // A whole JSON reply goes out in one write, as the upstream wrote it.
            headers["content-type"] = outcome.contentType;
            return outcome.bytes;
          case "stream":
            headers["content-type"] = outcome.contentType;
            headers["cache-control"] = "no-cache";
            return new Response(outcome.body, { headers });
          case "events":
            return (async function* () {
              for await (const event of outcome.events) yield sse(event as { event?: string; data: unknown });
            })();
        }
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
