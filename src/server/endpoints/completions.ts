import { completions as codec } from "../../wire/completions/codec.ts";
import type { ChatEndpoint } from "../edge/endpoint.ts";

const DESCRIPTION = `OpenAI's legacy completions: prompt, and suffix for fill-in-the-middle (what IDE autocomplete sends).
Passed through byte for byte to openai upstreams (OpenAI, llama.cpp, vLLM, Ollama), streams relayed as they come;
the mock answers in the text_completion shape, echoing the prompt. Other kinds of upstream answer 400.`;

/** `POST /v1/completions`, for code completion in IDE tools. */
export const completions: ChatEndpoint = {
  kind: "chat",
  method: "POST",
  path: "/v1/completions",
  scope: "chat",
  errors: "openai",
  framing: "sse",
  operation: "text_completion",
  call: () => ({ input: codec, output: codec }),
  openapi: {
    summary: "Legacy completion (fill-in-the-middle)",
    description: DESCRIPTION,
    tags: ["chat"],
    requestBody: { required: true, content: { "application/json": { schema: { type: "object", required: ["model", "prompt"], properties: { model: { type: "string" }, prompt: {}, suffix: { type: "string" }, stream: { type: "boolean" }, max_tokens: { type: "integer" }, echo: { type: "boolean" } } } } } },
  },
};
