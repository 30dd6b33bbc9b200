import type { EmbeddingsService } from "../../core/embeddings.ts";
import type { CallEndpoint } from "../edge/endpoint.ts";

const DESCRIPTION = `OpenAI's embeddings: input (a string, strings, or token arrays for openai upstreams), model, dimensions,
encoding_format float or base64. Passed through byte for byte to openai upstreams; on Bedrock converted for Titan Text
Embeddings (amazon.titan-embed-*) and Cohere Embed (cohere.embed-*, with input_type, search_document unless given); the
mock answers deterministic unit vectors (1536 dimensions unless asked). Other kinds of upstream answer 400.`;

/** `POST /v1/embeddings`, for codebase indexing, retrievers and RAG. */
export function embeddings(serve: EmbeddingsService): CallEndpoint {
  return {
    kind: "call",
    method: "POST",
    path: "/v1/embeddings",
    scope: "chat",
    errors: "openai",
    serve,
    openapi: {
      summary: "Embeddings",
      description: DESCRIPTION,
      tags: ["embeddings"],
      responses: { 200: { description: "The vectors, in OpenAI's list shape" } },
      requestBody: {
        required: true,
        content: {
          "application/json": {
            schema: {
              type: "object",
              required: ["model", "input"],
              properties: {
                model: { type: "string" }, input: {}, dimensions: { type: "integer", minimum: 1 },
                encoding_format: { type: "string", enum: ["float", "base64"] }, input_type: { type: "string" },
              },
            },
          },
        },
      },
    },
  };
}
