import type { Answer, ChatOutcome, ChatDeps, EndpointCall } from "./chat.ts";
import { invalidRequest, unavailable } from "../errors.ts";
import type { EmbeddingRequest, Embeddings } from "../ir.ts";
import { decodeEmbeddingRequest, decodeEmbeddings, encodeEmbeddings } from "../wire/embeddings/codec.ts";
import type { Upstream } from "../providers/kind.ts";
import type { Provider } from "../providers/provider.ts";
import type { Target } from "../routing/routes.ts";
import { firstByte } from "./first-byte.ts";
import type { Span } from "../telemetry/index.ts";
import { attemptDone, createLoop } from "./loop.ts";

const ENDPOINT = "POST /v1/embeddings";

/**
 * `POST /v1/embeddings` (contract 18): routed by model id, retried and failed over as a chat is
 * (loop.ts); this file says how one call to one target is answered. An OpenAI-compatible upstream
 * gets the client's body as sent and its reply goes back byte for byte; an upstream that converts
 * (Bedrock's Titan and Cohere, the mock) answers vectors that are written in OpenAI's shape, as
 * floats or base64 as asked.
 */
export function createEmbeddings({ config, upstreams }: Pick<ChatDeps, "config" | "upstreams">) {
  const loop = createLoop({ modelFallbacks: config.modelFallbacks, upstreams });

  /** OpenAI's `POST /v1/embeddings`. */
  function embeddings(call: EndpointCall): Promise<ChatOutcome> {
    const request = decodeEmbeddingRequest(call.body);
    return embed(call, request, (result, requested) => encodeEmbeddings(result, requested, request.encoding), true);
  }

  /**
   * Embeddings for a client of another dialect (Gemini's `:embedContent`): `encode` writes the vectors
   * in its shape; an OpenAI-compatible upstream gets an OpenAI body made from the request.
   */
  async function embed(call: EndpointCall, request: EmbeddingRequest, encode: (result: Embeddings, requested: string) => unknown, openaiClient = false): Promise<ChatOutcome> {
    const requested = request.model;
    if (!requested) throw invalidRequest("Missing required field 'model'.", "model: required");

    const answer = async (provider: Provider, target: Target, upstream: Upstream, attempt: Span): Promise<Answer> => {
      const native = provider.native?.["openai-embeddings"];
      if (native) {
        // Routed under another id (an alias, `<upstream>/<model>`): the body names the upstream's.
        const body = !openaiClient
          ? JSON.stringify({ model: target.model, input: request.texts, ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}) })
          : target.model === requested ? call.raw : JSON.stringify({ ...call.body, model: target.model });
        const reply = await firstByte(native({ body, model: target.model, requested, stream: false, signal: call.signal }), upstream.timeoutMs, provider.label);
        if (reply.kind !== "json") throw unavailable(`${provider.label} answered ${ENDPOINT} with a stream.`);
        attemptDone(attempt, target.model, reply.usage);
        call.onDone?.({ usage: reply.usage, ok: true });
        if (!openaiClient) {
          const text = typeof reply.body === "string" ? reply.body : new TextDecoder().decode(reply.body);
          return { kind: "json", body: encode(decodeEmbeddings(text, { label: provider.label, url: upstream.name, credentials: "" }), requested) };
        }
        return { kind: "bytes", bytes: reply.body, contentType: reply.contentType };
      }
      if (!provider.embed) throw invalidRequest(`${ENDPOINT} is not served by upstream '${upstream.name}' (kind ${upstream.kind}): route '${requested}' to an embedding model on an openai or bedrock upstream, or to the mock.`, "model: no embeddings on this upstream");
      if (request.tokens) throw invalidRequest(`Token arrays in 'input' are passed only to openai upstreams; upstream '${upstream.name}' is of kind ${upstream.kind}: send the texts.`, "input: token arrays");
      const result = await firstByte(provider.embed(request, target.model, call.signal), upstream.timeoutMs, provider.label);
      const usage = { input: { total: result.inputTokens, cacheRead: 0, cacheWrite: 0 }, output: 0 };
      attemptDone(attempt, target.model, usage);
      call.onDone?.({ usage, ok: true });
      return { kind: "json", body: encode(result, requested) };
    };

    return (await loop<Answer>({ requested, facts: { ...call.caller }, signal: call.signal, access: call.access, observe: call.observe, answer, trace: call.trace })) as ChatOutcome;
  }

  return Object.assign(embeddings, { embed });
}

export type EmbeddingsService = ReturnType<typeof createEmbeddings>;
