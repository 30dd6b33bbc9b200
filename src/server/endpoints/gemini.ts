import { invalidRequest, notFound } from "../../errors.ts";
import type { TokenCounter } from "../../core/count-tokens.ts";
import type { EmbeddingsService } from "../../core/embeddings.ts";
import { isObject } from "../../lib/read.ts";
import { geminiFor, geminiRequest } from "../../wire/gemini/codec.ts";
import { encodeCountReply } from "../../wire/gemini/count.ts";
import { decodeEmbedRequest, encodeEmbeddings } from "../../wire/gemini/embeddings.ts";
import { presentedKey, type Guard } from "../auth.ts";
import type { CallEndpoint, ChatEndpoint, PlainEndpoint } from "../edge/endpoint.ts";

/** The API versions Gemini's clients call: the `@google/genai` SDK 3.x defaults to v1, Gemini CLI to v1beta. */
const VERSIONS = ["v1beta", "v1"] as const;

const DESCRIPTION = `The Gemini API as generativelanguage.googleapis.com serves it, for Gemini CLI and the @google/genai SDK
(key in x-goog-api-key, ?key= or a bearer). Gemini models on a gemini or vertex upstream get the body as sent;
other models go through parley's conversion. thoughtSignature comes back whatever the client's dialect.`;

const jsonBody = { required: true, content: { "application/json": { schema: { type: "object" } } } };

/** Where Gemini's clients put their key (`x-goog-api-key`, `?key=`), else where every endpoint takes it (bearer, `x-api-key`); the URL is parsed only when it may hold one. */
export const geminiCallerKey = (request: Request) =>
  request.headers.get("x-goog-api-key") ?? (request.url.includes("key=") ? new URL(request.url).searchParams.get("key") : null) ?? presentedKey(request.headers);

/**
 * The Gemini API's front door (contract 23): `models/{model}:generateContent`,
 * `:streamGenerateContent` (server-sent events, `alt=sse`), `:countTokens`, `:embedContent` and
 * `:batchEmbedContents`, under /v1beta and /v1. The model and whether to stream are in the URL.
 */
export function gemini(count: TokenCounter, embeddings: EmbeddingsService, access?: Guard["access"]): (ChatEndpoint | PlainEndpoint | CallEndpoint)[] {
  return VERSIONS.flatMap((version) => {
    const at = (method: string) => `/${version}/models/:model:${method}`;
    const recordAs = (method: string) => `/${version}/models/{model}:${method}`;
    const chat = (method: "generateContent" | "streamGenerateContent"): ChatEndpoint => ({
      kind: "chat", method: "POST", path: at(method), scope: "chat", errors: "gemini", framing: "sse", key: geminiCallerKey, recordAs: recordAs(method),
      call(_body, request, query, params = []) {
        const stream = method === "streamGenerateContent";
        // Gemini streams a JSON array unless asked for server-sent events; every client of it asks (alt=sse).
        if (stream && !/[?&]alt=sse(&|$)/.test(query)) throw invalidRequest("parley streams Gemini's answers as server-sent events: add alt=sse to the URL.", "alt: must be sse");
        const codec = geminiFor(modelOf(params[0]), stream);
        return { input: codec, output: codec, headers: request.headers };
      },
      openapi: { summary: `Gemini ${method}`, description: DESCRIPTION, tags: ["gemini"], requestBody: jsonBody },
    });
    const countTokens: PlainEndpoint = {
      kind: "plain", method: "POST", path: at("countTokens"), scope: "chat", errors: "gemini", body: "json", key: geminiCallerKey,
      async answer({ request, headers, principal, body, raw, params }) {
        const model = modelOf(params[0]);
        // The count takes the request's contents, or a whole request in generateContentRequest.
        const counted = isObject(body!.generateContentRequest) ? body!.generateContentRequest : body!;
        const decoded = geminiRequest(counted, model, false);
        const { tokens, estimate } = await count({ request: decoded, raw: raw!, dialect: "gemini", headers: request.headers, signal: request.signal, key: principal!.label, endpoint: recordAs("generateContent"), access: access?.(principal!.key, raw!, false) });
        if (estimate) headers["x-parley-token-count"] = "estimate";
        return encodeCountReply(tokens);
      },
      openapi: { summary: "Gemini countTokens", description: "Gemini's own count on a gemini or vertex upstream; elsewhere a tokenizer estimate, marked x-parley-token-count: estimate.", tags: ["gemini"], requestBody: jsonBody },
    };
    const embed = (method: "embedContent" | "batchEmbedContents"): CallEndpoint => ({
      kind: "call", method: "POST", path: at(method), scope: "chat", errors: "gemini", key: geminiCallerKey, recordAs: recordAs(method),
      serve(call, params) {
        const batch = method === "batchEmbedContents";
        return embeddings.embed(call, decodeEmbedRequest(call.body, modelOf(params[0]), batch), (result) => encodeEmbeddings(result, batch));
      },
      openapi: { summary: `Gemini ${method}`, description: "Gemini's embeddings, from any upstream that embeds (gemini, vertex, openai, bedrock, the mock), in Gemini's shape.", tags: ["gemini"], requestBody: jsonBody },
    });
    return [chat("generateContent"), chat("streamGenerateContent"), countTokens, embed("embedContent"), embed("batchEmbedContents")];
  });
}

/** The model from the path (`gemini-2.5-pro`); one that is not percent-encoded UTF-8 names no model. */
export function modelOf(segment = ""): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw notFound(`No model has the id '${segment.slice(0, 200)}': it is not percent-encoded UTF-8.`);
  }
}
