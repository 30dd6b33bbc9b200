import { invalidRequest, validationError } from "../../errors.ts";
import type { EmbeddingRequest, Embeddings } from "../../ir.ts";
import { optionalString, positiveInt, type Json } from "../../lib/read.ts";

/** OpenAI's embeddings request and reply (contract 18), read into the IR and written from it. */

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
