import { isObject } from "../../lib/read.ts";
import { fromOpenAIChat } from "../openai-chat/usage.ts";
import type { Usage } from "../../ir.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";

/**
 * Replies of the endpoints passed through whole (contract 18), checked, never changed, their token
 * counts read. Tolerant of fields left out, but a reply of the wrong shape is the upstream failing.
 */

export function checkEmbeddings(body: unknown, up: Upstream): Usage | undefined {
  const bad = (what: string) => badShape(up, what, JSON.stringify(body).slice(0, 2000));
  if (!isObject(body) || !Array.isArray(body.data)) throw bad("no data list in the embeddings");
  if (!body.data.every((item) => isObject(item) && (Array.isArray(item.embedding) || typeof item.embedding === "string"))) throw bad("an item without an embedding");
  // Embeddings count only input: `prompt_tokens`, and no completion tokens.
  return fromOpenAIChat(body.usage);
}

export function checkTextCompletion(body: unknown, up: Upstream): Usage | undefined {
  const bad = (what: string) => badShape(up, what, JSON.stringify(body));
  if (!isObject(body) || !Array.isArray(body.choices)) throw bad("no choices in the completion");
  if (!body.choices.every((choice) => isObject(choice) && typeof choice.text === "string")) throw bad("a choice without text");
  return fromOpenAIChat(body.usage);
}
