import type { TokenCounter } from "../../core/count-tokens.ts";
import type { Json } from "../../lib/read.ts";
import { fromVertexId } from "../../providers/vertex/model-ids.ts";
import { anthropic } from "../../wire/anthropic/codec.ts";
import { fromVertexBody } from "../../wire/anthropic/vertex.ts";
import type { Guard } from "../auth.ts";
import type { ChatEndpoint, PlainEndpoint } from "../edge/endpoint.ts";
import { modelOf } from "./gemini.ts";

const BASE = "/v1/projects/:project/locations/:location/publishers/anthropic/models";

const DESCRIPTION = `Claude on Vertex AI as Google serves it, for Claude Code in Vertex mode and Anthropic's Vertex SDK
(bearer key): the Anthropic Messages body with anthropic_version and the model in the URL. A vertex upstream
gets the body as sent; Anthropic and Bedrock get it as Anthropic's; other models go through parley's conversion.`;

const jsonBody = { required: true, content: { "application/json": { schema: { type: "object" } } } };

/**
 * The Vertex AI front door for Claude (contract 23): `:rawPredict`, `:streamRawPredict` and
 * `count-tokens:rawPredict`, in Anthropic's dialect and envelope. The body becomes an Anthropic
 * Messages body (the model from the URL, its `@` id as Anthropic names it; `anthropic_version` out),
 * which every Claude upstream takes natively (Vertex puts its two edits back).
 */
export function vertex(count: TokenCounter, access?: Guard["access"]): (ChatEndpoint | PlainEndpoint)[] {
  const counting: PlainEndpoint = {
    kind: "plain", method: "POST", path: `${BASE}/count-tokens:rawPredict`, scope: "chat", errors: "anthropic", body: "json",
    async answer({ request, headers, principal, body, raw }) {
      // Anthropic's Vertex SDK keeps the model in the count's body.
      const model = fromVertexId(typeof body!.model === "string" ? body!.model : "");
      const messages = asMessages(body!, model);
      // A count needs no max_tokens; the decoder, written for messages, does.
      const decoded = anthropic.decodeRequest({ ...messages, max_tokens: messages.max_tokens ?? 1 });
      const counted = { request: decoded, raw: fromVertexBody(raw!, body!, model), dialect: "anthropic-messages" as const, headers: request.headers, signal: request.signal, key: principal!.label, endpoint: "/v1/messages", access: access?.(principal!.key, raw!, false) };
      const { tokens, estimate } = await count(counted);
      if (estimate) headers["x-parley-token-count"] = "estimate";
      return { input_tokens: tokens };
    },
    openapi: { summary: "Vertex count-tokens:rawPredict", description: "Claude's token count as Vertex serves it; the count of Anthropic's API, Vertex or Bedrock where they can, else a tokenizer estimate.", tags: ["vertex"], requestBody: jsonBody },
  };
  const predict = (method: "rawPredict" | "streamRawPredict"): ChatEndpoint => ({
    kind: "chat", method: "POST", path: `${BASE}/:model:${method}`, scope: "chat", errors: "anthropic", framing: "sse",
    recordAs: `/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:${method}`,
    call(body, request, _query, params = [], raw = "") {
      const model = fromVertexId(modelOf(params[2]));
      return { input: anthropic, output: anthropic, headers: request.headers, body: asMessages(body, model), raw: fromVertexBody(raw, body, model) };
    },
    openapi: { summary: `Vertex ${method} (Claude)`, description: DESCRIPTION, tags: ["vertex"], requestBody: jsonBody },
  });
  return [counting, predict("rawPredict"), predict("streamRawPredict")];
}

/** A Vertex body as Anthropic's: the model in, `anthropic_version` out. */
function asMessages(body: Json, model: string): Json {
  const { anthropic_version: _version, ...rest } = body;
  return { ...rest, model };
}
