import { invalidRequest } from "../../errors.ts";
import type { EmbeddingRequest, Embeddings } from "../../ir.ts";
import { isObject, numberOr } from "../../lib/read.ts";
import { badShape, fetchFailed, parseUpstreamJson, type Upstream } from "../../wire/upstream-errors.ts";

/**
 * Embeddings on Vertex: Google's embedding models answer `:predict` (`instances` of `content`, the
 * tokens counted per text in `statistics.token_count`), a batch at a time.
 */

/** Texts per call: Vertex takes up to 250 instances, fewer for its newest models; calls go one after another. */
const BATCH = 100;

const TASK_TYPES: Record<string, string> = { search_document: "RETRIEVAL_DOCUMENT", search_query: "RETRIEVAL_QUERY", classification: "CLASSIFICATION", clustering: "CLUSTERING" };

export function vertexEmbeddings(up: Upstream, post: (model: string, method: string, body: string, signal: AbortSignal) => Promise<Response>) {
  return async function embed(request: EmbeddingRequest, model: string, signal: AbortSignal): Promise<Embeddings> {
    if (request.tokens) throw invalidRequest(`${model} takes texts, not token arrays.`, "input: token arrays are not supported by Vertex AI");
    const task = request.inputType && Object.hasOwn(TASK_TYPES, request.inputType) ? TASK_TYPES[request.inputType] : undefined;
    const vectors: number[][] = [];
    let inputTokens = 0;
    for (let at = 0; at < request.texts.length; at += BATCH) {
      const texts = request.texts.slice(at, at + BATCH);
      const body = {
        instances: texts.map((content) => ({ content, ...(task ? { task_type: task } : {}) })),
        ...(request.dimensions !== undefined ? { parameters: { outputDimensionality: request.dimensions } } : {}),
      };
      const response = await post(model, "predict", JSON.stringify(body), signal);
      const text = await response.text().catch((error) => fetchFailed(up, error, true));
      const reply = parseUpstreamJson(up, text);
      const predictions = isObject(reply) && Array.isArray(reply.predictions) ? reply.predictions : [];
      if (predictions.length !== texts.length) throw badShape(up, `not ${texts.length} predictions`, text);
      for (const p of predictions) {
        const embeddings = isObject(p) && isObject(p.embeddings) ? p.embeddings : undefined;
        const values = embeddings?.values;
        if (!Array.isArray(values) || !values.every((v) => typeof v === "number")) throw badShape(up, "a prediction without embeddings.values", text);
        vectors.push(values);
        inputTokens += numberOr(isObject(embeddings!.statistics) ? embeddings!.statistics.token_count : undefined) ?? 0;
      }
    }
    return { vectors, inputTokens };
  };
}
