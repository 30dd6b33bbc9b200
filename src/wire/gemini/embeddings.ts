import { invalidRequest, validationError } from "../../errors.ts";
import { isObject, numberOr, type Json } from "../../lib/read.ts";
import type { EmbeddingRequest, Embeddings } from "../../ir.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";

/** Gemini's embeddings (`:embedContent`, `:batchEmbedContents`), both ways. */

/** The IR's `inputType` (Cohere's words, which the OpenAI-style endpoint takes) as Gemini's `taskType`. */
const TASK_TYPES: Record<string, string> = {
  search_document: "RETRIEVAL_DOCUMENT",
  search_query: "RETRIEVAL_QUERY",
  classification: "CLASSIFICATION",
  clustering: "CLUSTERING",
};

export function encodeBatchEmbed(request: EmbeddingRequest, model: string): Json {
  if (request.tokens) throw invalidRequest(`${model} takes texts, not token arrays.`, "input: token arrays are not supported by Gemini");
  const taskType = request.inputType && Object.hasOwn(TASK_TYPES, request.inputType) ? TASK_TYPES[request.inputType] : undefined;
  return {
    requests: request.texts.map((text) => ({
      model: `models/${model}`,
      content: { parts: [{ text }] },
      ...(taskType ? { taskType } : {}),
      ...(request.dimensions !== undefined ? { outputDimensionality: request.dimensions } : {}),
    })),
  };
}

/** `{embeddings: [{values}]}`, one per text; the tokens where Gemini counts them (`usageMetadata`), else 0. */
export function decodeBatchEmbed(body: unknown, up: Upstream, expected: number): Embeddings {
  const bad = (what: string) => badShape(up, what, JSON.stringify(body)?.slice(0, 500));
  if (!isObject(body) || !Array.isArray(body.embeddings) || body.embeddings.length !== expected) throw bad(`not ${expected} embeddings`);
  const vectors = body.embeddings.map((e) => {
    if (!isObject(e) || !isNumbers(e.values)) throw bad("an embedding without values");
    return e.values;
  });
  const usage = isObject(body.usageMetadata) ? body.usageMetadata : undefined;
  return { vectors, inputTokens: numberOr(usage?.promptTokenCount) ?? 0 };
}

/** A Gemini client's `:embedContent` (one content) or `:batchEmbedContents` (`requests`) body -> IR. */
export function decodeEmbedRequest(body: Json, model: string, batch: boolean): EmbeddingRequest {
  const requests = batch ? body.requests : [body];
  if (!Array.isArray(requests) || requests.length === 0) throw validationError("requests", "must be a non-empty array");
  const texts = requests.map((r, i) => {
    const content = isObject(r) ? r.content : undefined;
    if (!isObject(content) || !Array.isArray(content.parts)) throw validationError(batch ? `requests[${i}].content` : "content", "must be a content with parts");
    return content.parts.map((p) => (isObject(p) && typeof p.text === "string" ? p.text : "")).join("");
  });
  const first = isObject(requests[0]) ? requests[0] : {};
  const task = Object.entries(TASK_TYPES).find(([, word]) => word === first.taskType)?.[0];
  const dimensions = numberOr(first.outputDimensionality);
  return { model, texts, tokens: false, ...(dimensions !== undefined ? { dimensions } : {}), ...(task ? { inputType: task } : {}) };
}

export function encodeEmbeddings(embeddings: Embeddings, batch: boolean): Json {
  if (!batch) return { embedding: { values: embeddings.vectors[0] ?? [] } };
  return { embeddings: embeddings.vectors.map((values) => ({ values })) };
}

const isNumbers = (value: unknown): value is number[] => Array.isArray(value) && value.every((x) => typeof x === "number");
