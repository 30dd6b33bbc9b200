import { invalidRequest } from "../../errors.ts";
import { limiter } from "../../lib/concurrency.ts";
import { isObject, numberOr } from "../../lib/read.ts";
import type { EmbeddingRequest, Embeddings } from "../../ir.ts";
import { badShape, fetchFailed } from "../../wire/upstream-errors.ts";
import type { BedrockTransport } from "./transport.ts";

/**
 * Embeddings on Bedrock's InvokeModel (contract 18): Titan Text Embeddings take one text a call
 * (called a few at a time), Cohere Embed takes a batch. Both answer float vectors; the tokens come
 * from Bedrock's `x-amzn-bedrock-input-token-count` header where the body does not say.
 */

/** Titan calls in flight for one request: enough to be quick, few enough not to be throttled at once. */
const TITAN_CONCURRENCY = 8;
/** Cohere Embed's limit of texts per call. */
const COHERE_BATCH = 96;
const TOKEN_HEADER = "x-amzn-bedrock-input-token-count";

/** Titan Text Embeddings (v1, v2, g1-text): the image model takes another body and is not served here. */
export const isTitanEmbed = (modelId: string) => /(^|[./])amazon\.titan-embed-(text|g1-text)-/.test(modelId);
export const isCohereEmbed = (modelId: string) => /(^|[./])cohere\.embed-/.test(modelId);

export function createBedrockEmbeddings({ up, post }: Pick<BedrockTransport, "up" | "post">) {
  const call = async (modelId: string, body: unknown, signal: AbortSignal) => {
    const response = await post(modelId, "invoke", JSON.stringify(body), signal);
    const text = await response.text().catch((error) => fetchFailed(up, error, true));
    let reply: unknown;
    try {
      reply = JSON.parse(text);
    } catch {
      throw badShape(up, "not JSON", text);
    }
    if (!isObject(reply)) throw badShape(up, "not an object", text);
    return { reply, tokens: Number(response.headers.get(TOKEN_HEADER) ?? NaN), text };
  };

  async function titan(request: EmbeddingRequest, modelId: string, signal: AbortSignal): Promise<Embeddings> {
    // The first Titan model makes 1536 numbers and takes nothing but the text.
    const v1 = /titan-embed-text-v1/.test(modelId);
    if (v1 && request.dimensions !== undefined) throw invalidRequest(`${modelId} makes vectors of 1536 dimensions only: leave 'dimensions' out, or use amazon.titan-embed-text-v2:0 (256, 512 or 1024).`, "dimensions: not supported by the model");
    const extra = v1 ? {} : { ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}), normalize: true };
    const run = limiter(TITAN_CONCURRENCY);
    let failed = false;
    const one = (text: string) => run(async () => {
      // After one call failed the request fails: the calls still waiting are not made.
      if (failed) return { vector: [], tokens: 0 };
      try {
        const { reply, tokens, text: raw } = await call(modelId, { inputText: text, ...extra }, signal);
        if (!isNumbers(reply.embedding)) throw badShape(up, "no embedding in Titan's reply", raw);
        return { vector: reply.embedding, tokens: numberOr(reply.inputTextTokenCount) ?? (Number.isFinite(tokens) ? tokens : 0) };
      } catch (error) {
        failed = true;
        throw error;
      }
    });
    const answers = await Promise.all(request.texts.map(one));
    return { vectors: answers.map((a) => a.vector), inputTokens: answers.reduce((sum, a) => sum + a.tokens, 0) };
  }

  async function cohere(request: EmbeddingRequest, modelId: string, signal: AbortSignal): Promise<Embeddings> {
    // Only Embed v4 takes `output_dimension`; v3 refuses it as an "extraneous key" (contract 26).
    if (request.dimensions !== undefined && !/cohere\.embed-v4/.test(modelId)) throw invalidRequest(`${modelId} makes vectors of one size only: leave 'dimensions' out, or use cohere.embed-v4:0 (256, 512, 1024 or 1536).`, "dimensions: not supported by the model");
    const vectors: number[][] = [];
    let inputTokens = 0;
    for (let at = 0; at < request.texts.length; at += COHERE_BATCH) {
      const texts = request.texts.slice(at, at + COHERE_BATCH);
      const body = { texts, input_type: request.inputType ?? "search_document", ...(request.dimensions !== undefined ? { output_dimension: request.dimensions } : {}) };
      const { reply, tokens, text } = await call(modelId, body, signal);
      // `embeddings` is the list itself, or by type (`{ float: [...] }`) when types were asked for.
      const list = isObject(reply.embeddings) ? reply.embeddings.float : reply.embeddings;
      if (!Array.isArray(list) || list.length !== texts.length || !list.every(isNumbers)) throw badShape(up, `not ${texts.length} float embeddings in Cohere's reply`, text);
      vectors.push(...list);
      if (Number.isFinite(tokens)) inputTokens += tokens;
    }
    return { vectors, inputTokens };
  }

  return async function embed(request: EmbeddingRequest, modelId: string, signal: AbortSignal): Promise<Embeddings> {
    if (isTitanEmbed(modelId)) return titan(request, modelId, signal);
    if (isCohereEmbed(modelId)) return cohere(request, modelId, signal);
    throw invalidRequest(`POST /v1/embeddings on Bedrock takes Titan Text Embeddings (amazon.titan-embed-text-*) and Cohere Embed (cohere.embed-*) models; '${modelId}' is neither.`, "model: not an embedding model");
  };
}

const isNumbers = (value: unknown): value is number[] => Array.isArray(value) && value.every((x) => typeof x === "number");
