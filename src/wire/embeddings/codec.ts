import { invalidRequest, validationError } from "../../errors.ts";
import type { EmbeddingRequest, Embeddings, Usage } from "../../ir.ts";
import { isObject, optionalString, positiveInt, type Json } from "../../lib/read.ts";
import { fromOpenAIChat } from "../openai-chat/usage.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";

/**
 * OpenAI's embeddings (contract 18): the request read into the IR and the reply written from it
 * (the core's converted route and the mock), and an upstream's reply checked as it passes through.
 */

export type EncodingFormat = "float" | "base64";

/** At most this many inputs in one request, as OpenAI allows. */
const MAX_INPUTS = 2048;

export function decodeEmbeddingRequest(body: Json): EmbeddingRequest & { encoding: EncodingFormat } {
  const input = body.input;
  if (input === undefined || input === null) throw invalidRequest("Missing required field 'input'.", "input: required");
  const { texts, tokens } = inputs(input);
  if (texts.length + (tokens ? 1 : 0) === 0) throw validationError("input", "must not be empty");
  if (texts.length > MAX_INPUTS) throw validationError("input", `takes at most ${MAX_INPUTS} inputs`);
  const encoding = optionalString(body, "encoding_format") ?? "float";
  if (encoding !== "float" && encoding !== "base64") throw validationError("encoding_format", "must be float or base64");
  const dimensions = positiveInt(body, "dimensions");
  const inputType = optionalString(body, "input_type");
  return {
    model: optionalString(body, "model"),
    texts,
    tokens,
    encoding,
    ...(dimensions !== undefined ? { dimensions } : {}),
    ...(inputType !== undefined ? { inputType } : {}),
  };
}

/** A string, strings, or token arrays (a list of integers, or lists of them): these go only to OpenAI-compatible upstreams. */
function inputs(input: unknown): { texts: string[]; tokens: boolean } {
  if (typeof input === "string") return { texts: [input], tokens: false };
  const rule = "must be a string, an array of strings, an array of token ids or an array of such arrays";
  if (!Array.isArray(input)) throw validationError("input", rule);
  if (input.every((v) => typeof v === "string")) return { texts: input, tokens: false };
  const ids = (v: unknown) => Array.isArray(v) && v.every(Number.isInteger);
  if (ids(input) || input.every(ids)) return { texts: [], tokens: true };
  throw validationError("input", rule);
}

/** OpenAI's reply: the vectors as lists of numbers, or as base64 of their little-endian float32 bytes (what the SDKs ask for). */
export function encodeEmbeddings({ vectors, inputTokens }: Embeddings, model: string, encoding: EncodingFormat) {
  return {
    object: "list",
    data: vectors.map((vector, index) => ({ object: "embedding", index, embedding: encoding === "base64" ? base64(vector) : vector })),
    model,
    usage: { prompt_tokens: inputTokens, total_tokens: inputTokens },
  };
}

function base64(vector: number[]): string {
  const floats = Float32Array.from(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString("base64");
}

/** An upstream's reply passed through whole, checked, never changed, its token counts read: only input (`prompt_tokens`). */
export function checkEmbeddings(body: unknown, up: Upstream): Usage | undefined {
  const bad = (what: string) => badShape(up, what, JSON.stringify(body).slice(0, 2000));
  if (!isObject(body) || !Array.isArray(body.data)) throw bad("no data list in the embeddings");
  if (!body.data.every((item) => isObject(item) && (Array.isArray(item.embedding) || typeof item.embedding === "string"))) throw bad("an item without an embedding");
  return fromOpenAIChat(body.usage);
}

/** An OpenAI-compatible upstream's reply (already checked) read into the IR, for a client of another dialect. */
export function decodeEmbeddings(text: string, up: Upstream): Embeddings {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badShape(up, "embeddings that are not JSON", text.slice(0, 2000));
  }
  checkEmbeddings(body, up);
  const data = (body as { data: Json[] }).data.toSorted((a, b) => Number(a.index ?? 0) - Number(b.index ?? 0));
  const vectors = data.map((item) => {
    if (!Array.isArray(item.embedding)) throw badShape(up, "an embedding that is not a list of numbers", text.slice(0, 2000));
    return item.embedding as number[];
  });
  return { vectors, inputTokens: fromOpenAIChat((body as Json).usage)?.input.total ?? 0 };
}
