/**
 * The @google/genai SDK's reply types that parley writes for Gemini's clients: the roots
 * scripts/vendor-schemas.ts turns into JSON Schema. The reply itself is a class with getters
 * (`text`, `functionCalls`): its wire fields are put together from these in test/wire/gemini-shapes.test.ts.
 */
import type { Candidate, CountTokensResponse, ContentEmbedding, GenerateContentResponsePromptFeedback, GenerateContentResponseUsageMetadata } from "@google/genai";

export type GeminiCandidate = Candidate;
export type GeminiUsageMetadata = GenerateContentResponseUsageMetadata;
export type GeminiPromptFeedback = GenerateContentResponsePromptFeedback;
export type GeminiCountTokens = CountTokensResponse;
export type GeminiEmbedding = ContentEmbedding;
