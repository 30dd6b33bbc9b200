import { notFound, validationError } from "../../errors.ts";
import { anthropicDisplayName, claudeListing, isAnthropicName } from "../../providers/anthropic-models.ts";
import type { Discovery } from "../../routing/discovery.ts";
import type { Live } from "../../routing/live.ts";
import { encodeModel, encodeModelList } from "../../wire/gemini/models.ts";
import { isGeminiClient } from "../../wire/gemini/path.ts";
import { presentedKey, type Principal } from "../auth.ts";
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

  // A key limited by `models` sees only those (contract 19).
  const only = <M extends { id: string }>(list: M[], principal?: Principal) => {
    const allows = principal?.key.allowsModel;
    return allows ? list.filter((m) => allows(m.id)) : list;
  };
  const list = (request: Request, query: Record<string, string>, principal?: Principal) => {
    if (isAnthropic(request)) return anthropicPage(only(anthropicModels(), principal), query);
    if (isGemini(request)) return geminiList(query, principal);
    return { object: "list", data: only(models(), principal) };
  };
  const geminiList = (query: Record<string, string>, principal?: Principal) => encodeModelList(only(models(), principal).map((m) => m.id), Number(query.pageSize ?? 50), query.pageToken);
  const geminiModel = (segment: string, principal?: Principal) => {
    const id = decoded(segment.startsWith("models/") ? segment.slice(7) : segment);
    if (principal?.key.allowsModel && !principal.key.allowsModel(id)) throw notFound(`No model has the id '${id.slice(0, 200)}' for this key.`);
    return encodeModel(find(id).id);
  };

  // Anthropic's and Gemini's clients get their own envelope, for errors as for answers.
  const errors = (request: Request): Renderer => (isAnthropic(request) ? "anthropic" : isGemini(request) ? "gemini" : "parley");
  // Gemini's clients send their key where Gemini takes it.
  const key = (request: Request) => presentedKey(request.headers) ?? geminiCallerKey(request);
  return [
    {
      kind: "plain", method: "GET", path: "/v1/models", scope: "models", errors, key,
      answer: ({ request, query, principal }) => list(request, query, principal),
      openapi: { summary: "List models", description: "OpenAI's list; Anthropic's (limit, after_id, before_id) when the request has anthropic-version; Gemini's when it has x-goog-api-key or ?key=.", tags: ["models"] },
    },
    {
      kind: "plain", method: "GET", path: "/v1/models/*", scope: "models", errors, key,
      answer({ request, params, principal }) {
        if (isGemini(request)) return geminiModel(params[0]!, principal);
        const id = decoded(params[0]!);
        if (principal?.key.allowsModel && !principal.key.allowsModel(id)) throw notFound(`No model has the id '${id.slice(0, 200)}' for this key.`);
        const model = find(id);
        return isAnthropic(request) ? anthropicShape(model) : model;
      },
      openapi: { summary: "One model", tags: ["models"] },
    },
    {
      kind: "plain", method: "GET", path: "/v1beta/models", scope: "models", errors: "gemini", key: geminiCallerKey,
      answer: ({ query, principal }) => geminiList(query, principal),
      openapi: { summary: "List models (Gemini)", description: "Gemini's list (pageSize, pageToken), for Gemini CLI and the @google/genai SDK.", tags: ["gemini"] },
    },
    {
      kind: "plain", method: "GET", path: "/v1beta/models/*", scope: "models", errors: "gemini", key: geminiCallerKey,
      answer: ({ params, principal }) => geminiModel(params[0]!, principal),
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
