import type { Json } from "../../lib/read.ts";

/** Gemini's model list (`GET /v1beta/models`, `GET /v1beta/models/{m}`), as a Gemini client reads it. */

const CHAT_METHODS = ["generateContent", "streamGenerateContent", "countTokens"];
const EMBED_METHODS = ["embedContent", "batchEmbedContents"];

export function encodeModel(id: string, displayName = id): Json {
  const embeds = /embed/.test(id);
  return { name: `models/${id}`, baseModelId: id, version: "001", displayName, supportedGenerationMethods: embeds ? EMBED_METHODS : CHAT_METHODS };
}

/** One page: `pageToken` is the offset the previous page ended at, as the client sent it back. */
export function encodeModelList(ids: string[], pageSize = 50, pageToken?: string | null): Json {
  const from = Math.max(0, Number.parseInt(pageToken ?? "0", 10) || 0);
  const size = Math.min(Math.max(1, pageSize || 50), 1000);
  const page = ids.slice(from, from + size);
  return { models: page.map((id) => encodeModel(id)), ...(from + size < ids.length ? { nextPageToken: String(from + size) } : {}) };
}
