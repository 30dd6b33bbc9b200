import { CODECS, detectFormat, formatName } from "../../wire/detect.ts";
import type { ChatEndpoint } from "../edge/endpoint.ts";

const DESCRIPTION = `One endpoint, three request formats: OpenAI Chat Completions (alpha), Anthropic Messages
(beta_messages, detected by anthropic_version / vendor_version or Anthropic-only fields) and Titan Text
(beta_textgen, detected by inputText). Routed by model id; answered in ?target_format= (default alpha).
With "stream": true the reply is Server-Sent Events.`;

/** `POST /v1/chat/completions`: any of the three formats in, the one `?target_format=` names out. */
export const chatCompletions: ChatEndpoint = {
  kind: "chat",
  method: "POST",
  path: "/v1/chat/completions",
  scope: "chat",
  errors: "parley",
  framing: "sse",
  call(body, _request, query) {
    const target = query && new URLSearchParams(query).get("target_format");
    return { input: CODECS[detectFormat(body)], output: target === null || target === "" ? CODECS.alpha : CODECS[formatName(target)] };
  },
  openapi: {
    summary: "Chat completion in any of three formats",
    description: DESCRIPTION,
    tags: ["chat"],
    parameters: [{ name: "target_format", in: "query", required: false, schema: { type: "string", enum: ["alpha", "beta_messages", "beta_textgen"] } }],
    requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
  },
};
