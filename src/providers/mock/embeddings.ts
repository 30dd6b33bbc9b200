import { validationError } from "../../errors.ts";
import type { EmbeddingRequest, Embeddings } from "../../ir.ts";

/** The length of the mock's vectors unless `dimensions` says: text-embedding-3-small's, so an index built for OpenAI's takes them. */
export const MOCK_DIMENSIONS = 1536;
const MAX_DIMENSIONS = 8192;

/**
 * Deterministic unit vectors: the text's hash seeds a PRNG, whose first `dimensions` numbers,
 * scaled to length 1, are the vector. The same text gets the same vector on every run and every
 * machine; a shorter vector is the start of the longer one, scaled. Similar texts are not close.
 */
export function mockEmbeddings(request: EmbeddingRequest): Embeddings {
  const dimensions = request.dimensions ?? MOCK_DIMENSIONS;
  if (dimensions > MAX_DIMENSIONS) throw validationError("dimensions", `must be at most ${MAX_DIMENSIONS} for the mock`);
  return {
    vectors: request.texts.map((text) => unitVector(text, dimensions)),
    inputTokens: request.texts.reduce((sum, text) => sum + Math.max(1, Math.ceil(text.length / 4)), 0),
  };
}

function unitVector(text: string, dimensions: number): number[] {
  const next = mulberry32(Number(Bun.hash.wyhash(text, 0n) & 0xffffffffn));
  const vector = Array.from({ length: dimensions }, () => next() * 2 - 1);
  const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0)) || 1;
  return vector.map((x) => x / norm);
}

/** A small 32-bit PRNG (Tommy Ettinger's mulberry32): numbers in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
