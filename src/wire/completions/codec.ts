import { invalidRequest, validationError } from "../../errors.ts";
import { textOf, type ChatReply, type ChatRequest, type Finish, type SseEvent, type Usage } from "../../ir.ts";
import { isObject, optionalBoolean, optionalString, type Json } from "../../lib/read.ts";
import { randomId, type Codec, type StreamEncoder } from "../codec.ts";
import { fromOpenAIChat, toOpenAIChat, usageIn } from "../openai-chat/usage.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";
import { answeredBy, usageTracker } from "../usage.ts";

/**
 * OpenAI's legacy completions (`POST /v1/completions`, contract 18): `prompt` and `suffix` for
 * fill-in-the-middle. Served only where the upstream takes the body as sent (OpenAI-compatible
 * servers, the mock), so the request is read only for what routing needs: the model and `stream`.
 * The replies are written here for the mock: `text_completion`, whole or streamed; an upstream's
 * is checked as it passes through (checkTextCompletion).
 */

const ONLY_NATIVE = { field: "model", reason: "POST /v1/completions is served by openai upstreams and by the mock only." };

function decodeRequest(body: Json): ChatRequest {
  const prompt = body.prompt;
  if (prompt === undefined) throw invalidRequest("Missing required field 'prompt'.", "prompt: required");
  if (typeof prompt !== "string" && !Array.isArray(prompt)) throw validationError("prompt", "must be a string, an array of strings, or token arrays");
  // Token arrays and several prompts pass through to an OpenAI-compatible server untouched; the mock reads one text.
  const text = typeof prompt === "string" ? prompt : Array.isArray(prompt) && typeof prompt[0] === "string" ? prompt[0] : "";
  const streamOptions = isObject(body.stream_options) ? body.stream_options : {};
  return {
    model: optionalString(body, "model"),
    system: [],
    messages: text ? [{ role: "user", content: [{ type: "text", text }] }] : [],
    stream: optionalBoolean(body, "stream") ?? false,
    includeUsage: streamOptions.include_usage === true,
    fileIds: [],
    needsNative: ONLY_NATIVE,
  };
}

const now = () => Math.floor(Date.now() / 1000);

const finishReason = (finish: Finish) => (finish.reason === "length" || finish.reason === "content_filter" ? finish.reason : "stop");

function encodeReply(reply: ChatReply, model: string) {
  return {
    id: randomId("cmpl-"),
    object: "text_completion",
    created: now(),
    model,
    choices: [{ text: textOf(reply.content), index: 0, logprobs: null, finish_reason: finishReason(reply.finish) }],
    ...(reply.usage ? { usage: toOpenAIChat(reply.usage) } : {}),
  };
}

function streamEncoder(model: string, request: ChatRequest): StreamEncoder {
  const id = randomId("cmpl-");
  const created = now();
  const usage = usageTracker();
  const chunk = (text: string, finish: string | null = null): SseEvent => ({
    data: { id, object: "text_completion", created, model, choices: [{ text, index: 0, logprobs: null, finish_reason: finish }] },
  });
  return {
    event(event) {
      if (event.type === "text") return [chunk(event.text)];
      if (event.type === "finish") return [chunk("", finishReason(event.finish))];
      if (event.type === "usage" || event.type === "start") usage.add(event.usage);
      return [];
    },
    error: (error) => [{ data: { error: { type: error.type, message: error.message } } }],
    end() {
      const counts = request.includeUsage ? usage.usage() : undefined;
      return [...(counts ? [{ data: { id, object: "text_completion", created, model, choices: [], usage: toOpenAIChat(counts) } }] : []), { data: "[DONE]" }];
    },
  };
}

export const completions: Codec = { decodeRequest, encodeReply, streamEncoder, lastEvent: "[DONE]", dialect: "openai-completions", usageIn };

/** An upstream's reply passed through whole, checked, never changed, its token counts read; a reply of the wrong shape is the upstream failing. */
export function checkTextCompletion(body: unknown, up: Upstream): Usage | undefined {
  const bad = (what: string) => badShape(up, what, JSON.stringify(body));
  if (!isObject(body) || !Array.isArray(body.choices)) throw bad("no choices in the completion");
  if (!body.choices.every((choice) => isObject(choice) && typeof choice.text === "string")) throw bad("a choice without text");
  return answeredBy(fromOpenAIChat(body.usage), body.model);
}
