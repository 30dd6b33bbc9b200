import { notFound, validationError } from "../../errors.ts";
import { anthropicDisplayName, claudeListing, isAnthropicName } from "../../providers/anthropic-models.ts";
import type { Discovery } from "../../routing/discovery.ts";
import type { Live } from "../../routing/live.ts";
import { encodeModel, encodeModelList } from "../../wire/gemini/models.ts";
import { isGeminiClient } from "../../wire/gemini/path.ts";
import { presentedKey } from "../auth.ts";
import type { PlainEndpoint } from "../edge/endpoint.ts";
import type { Renderer } from "../edge/errors.ts";
import { geminiCallerKey } from "./gemini.ts";

/** Anthropic's model object (`anthropic-version` callers). */
interface AnthropicModelInfo {
  type: "model";
  id: string;
  display_name: string;
  created_at: string;
  /** Anthropic's stage: every model listed here can be called. */
  lifecycle: "active";
}

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 1000;

/** A model as /v1/models lists it: OpenAI's object, plus the provider that serves it. */
export interface ModelInfo {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  /** The upstream that routes the id. */
  provider: string;
}

/**
 * GET /v1/models and /v1/models/{id}: OpenAI's shapes, or Anthropic's when the request has
 * `anthropic-version`. The list is what discovery knows now (it refreshes in the background), with
 * Anthropic's own model names before Bedrock's when it is configured.
 */
export function modelEndpoints(upstreams: Live, discovery: Discovery): PlainEndpoint[] {
  const route = (id: string) => {
    try {
      return upstreams.current().router(id).targets[0]!.upstream;
    } catch {
      return undefined;
    }
  };
  // Claude's own names, when an upstream that takes them is configured.
  const claude = (): ModelInfo[] =>
    claudeListing(route, (name) => upstreams.current().providers.configured(name)).map(({ id, created, owned_by, provider }) => ({ id, object: "model", created, owned_by, provider }));
  const listed = (): ModelInfo[] =>
    discovery.list(route).filter((m) => !isAnthropicName(m.id)).map(({ id, created, owned_by, provider }) => ({ id, object: "model" as const, created, owned_by, provider }));
  // OpenAI's list keeps the upstreams' order (a chat's default model is the first one); Claude's names come before the first upstream that takes them.
  const models = (): ModelInfo[] => {
    const all = listed();
    const names = claude();
    if (!names.length) return all;
    const at = all.findIndex((m) => m.provider === names[0]!.provider);
    return at === -1 ? [...all, ...names] : [...all.slice(0, at), ...names, ...all.slice(at)];
  };
  // Anthropic's callers (Claude Code, the Anthropic SDKs) get Claude's names first.
  const anthropicModels = () => [...claude(), ...listed()].map(anthropicShape);
  const find = (id: string): ModelInfo => {
    const listed = models().find((m) => m.id === id);
    if (listed) return listed;
    return { id, object: "model", created: 0, owned_by: "parley", provider: upstreams.current().router(id).targets[0]!.upstream }; // 404 when the id routes nowhere
  };

  const geminiList = (query: Record<string, string>) => encodeModelList(models().map((m) => m.id), Number(query.pageSize ?? 50), query.pageToken);
  const geminiModel = (segment: string) => encodeModel(find(decoded(segment.startsWith("models/") ? segment.slice(7) : segment)).id);

  // Anthropic's and Gemini's clients get their own envelope, for errors as for answers.
  const errors = (request: Request): Renderer => (isAnthropic(request) ? "anthropic" : isGemini(request) ? "gemini" : "parley");
  // Gemini's clients send their key where Gemini takes it.
  const key = (request: Request) => presentedKey(request.headers) ?? geminiCallerKey(request);
  return [
    {
      kind: "plain", method: "GET", path: "/v1/models", scope: "models", errors, key,
      answer({ request, query }) {
        if (isAnthropic(request)) return anthropicPage(anthropicModels(), query);
        return isGemini(request) ? geminiList(query) : { object: "list", data: models() };
      },
      openapi: { summary: "List models", description: "OpenAI's list; Anthropic's (limit, after_id, before_id) when the request has anthropic-version; Gemini's when it has x-goog-api-key or ?key=.", tags: ["models"] },
    },
    {
      kind: "plain", method: "GET", path: "/v1/models/*", scope: "models", errors, key,
      answer({ request, params }) {
        if (isGemini(request)) return geminiModel(params[0]!);
        const model = find(decoded(params[0]!));
        return isAnthropic(request) ? anthropicShape(model) : model;
      },
      openapi: { summary: "One model", tags: ["models"] },
    },
    {
      kind: "plain", method: "GET", path: "/v1beta/models", scope: "models", errors: "gemini", key: geminiCallerKey,
      answer: ({ query }) => geminiList(query),
      openapi: { summary: "List models (Gemini)", description: "Gemini's list (pageSize, pageToken), for Gemini CLI and the @google/genai SDK.", tags: ["gemini"] },
    },
    {
      kind: "plain", method: "GET", path: "/v1beta/models/*", scope: "models", errors: "gemini", key: geminiCallerKey,
      answer: ({ params }) => geminiModel(params[0]!),
      openapi: { summary: "One model (Gemini)", tags: ["gemini"] },
    },
  ];
}

/** The id from the path; one that is not percent-encoded UTF-8 (`%ED%A0%80`, a lone surrogate; `%ff`) names no model. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw notFound(`No model has the id '${segment.slice(0, 200)}': it is not percent-encoded UTF-8.`);
  }
}

const isAnthropic = (request: Request) => request.headers.has("anthropic-version");
/** A Gemini client's request: its key where Gemini takes it (the URL read only when the header is absent). */
const isGemini = (request: Request) => request.headers.has("x-goog-api-key") || (request.url.includes("key=") && isGeminiClient(request.headers, new URL(request.url)));

function anthropicShape(model: ModelInfo): AnthropicModelInfo {
  return { type: "model", id: model.id, display_name: anthropicDisplayName(model.id), created_at: new Date(model.created * 1000).toISOString().replace(".000Z", "Z"), lifecycle: "active" };
}

/** Anthropic's cursor pages: `after_id` / `before_id` (exclusive), `limit` 1 to 1000. */
function anthropicPage(all: AnthropicModelInfo[], query: Record<string, string | undefined>) {
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw validationError("limit", `must be an integer from 1 to ${MAX_LIMIT}`);
  const at = (id: string, field: string) => {
    const index = all.findIndex((m) => m.id === id);
    if (index < 0) throw notFound(`${field}: no model '${id}'`);
    return index;
  };
  let data: AnthropicModelInfo[];
  let hasMore: boolean;
  if (query.before_id !== undefined) {
    const end = at(query.before_id, "before_id");
    const start = Math.max(0, end - limit);
    data = all.slice(start, end);
    hasMore = start > 0;
  } else {
    const start = query.after_id !== undefined ? at(query.after_id, "after_id") + 1 : 0;
    data = all.slice(start, start + limit);
    hasMore = start + limit < all.length;
  }
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
