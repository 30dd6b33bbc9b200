/**
 * The one internal representation of a chat. Every format decodes requests into it and encodes
 * replies and stream events from it; every provider turns it into its wire call and back.
 */

/** A client's own prompt-cache breakpoint (Anthropic's `cache_control`), carried as it was sent. */
export type CacheControl = Record<string, unknown>;

export type Part =
  | { type: "text"; text: string; cache?: CacheControl }
  /** Inline image, base64 bytes. */
  | { type: "image"; mediaType: string; data: string }
  /** Remote image: only OpenAI-compatible upstreams fetch these themselves. */
  | { type: "image_url"; url: string }
  /** `arguments` is the JSON text of the call's input, as OpenAI carries it. */
  | { type: "tool_call"; id: string; name: string; arguments: string }
  | { type: "tool_result"; toolCallId: string; content: string; isError?: boolean; cache?: CacheControl }
  /** A document (a PDF), base64 bytes; only some upstreams read them. */
  | { type: "document"; mediaType: string; data: string; title?: string }
  /**
   * The model's reasoning (Anthropic `thinking`), with the signature that lets it be sent back;
   * `redacted` holds a `redacted_thinking` block's opaque data. Upstreams that cannot take it back drop it.
   */
  | { type: "reasoning"; text: string; signature?: string; redacted?: string };

export interface Message {
  /**
   * `system`: instructions given inside the conversation (text parts only), kept where they were
   * said; an upstream that takes system text only at the top reads the request through `systemOnTop`.
   */
  role: "user" | "assistant" | "system";
  content: Part[];
}

export type Turn = Message & { role: "user" | "assistant" };

export interface Tool {
  name: string;
  description?: string;
  /** JSON Schema of the input. */
  parameters: Record<string, unknown>;
}

export type ToolChoice = { type: "auto" } | { type: "required" } | { type: "none" } | { type: "tool"; name: string };

export interface ChatRequest {
  model?: string;
  /** The system and developer texts before the conversation, in order (later ones are `system` messages). */
  system: string[];
  messages: Message[];
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  tools?: Tool[];
  toolChoice?: ToolChoice;
  stream: boolean;
  /** OpenAI's `stream_options.include_usage`: send a usage chunk before `[DONE]`. */
  includeUsage: boolean;
  fileIds: string[];
  /** A field only a same-family upstream can honour (Responses' `previous_response_id`): a converted call is refused with a 400 naming it. */
  needsNative?: { field: string; reason: string };
  /** `false`: at most one tool call per turn (OpenAI `parallel_tool_calls`, Anthropic `disable_parallel_tool_use`). */
  parallelToolCalls?: boolean;
  /**
   * What the client sent that the IR cannot carry (server tools, server tool blocks, MCP servers),
   * named by field. A target that cannot take the client's body as it is refuses the request with them.
   */
  unsupported?: string[];
  /** The answer's shape: JSON, or JSON that follows a schema. */
  responseFormat?: ResponseFormat;
  /**
   * The client asked the model to think first (Anthropic `thinking` enabled, `reasoning_effort` or
   * Responses' `reasoning` set): routes' `when.thinking` reads it (contract 15).
   */
  thinking?: boolean;
  /** The client's `cache_control` on each `system` entry (same index), where it put one (contract 22). */
  systemCache?: (CacheControl | undefined)[];
  /**
   * The client's dialect has no word for cache breakpoints (Chat Completions, Responses): an
   * Anthropic upstream's encoder places them on a long request that carries none (contract 22).
   */
  autoCache?: boolean;
}

export type ResponseFormat =
  | { type: "json_object" }
  | { type: "json_schema"; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean };

export type FinishReason = "stop" | "stop_sequence" | "length" | "tool_calls" | "content_filter" | "other";

export interface Finish {
  reason: FinishReason;
  /** The upstream's own word for it. */
  raw: string;
  stopSequence?: string;
}

/**
 * Tokens as the upstream billed them, with one meaning whoever counted (vercel/ai's
 * LanguageModelV3Usage): `input.total` is every prompt token, cached or not; `cacheRead` and
 * `cacheWrite` are the parts of it read from and written to the prompt cache, so the input without
 * the cache is `total - cacheRead - cacheWrite` (`uncachedInput`). Each wire decoder fills it from
 * its dialect's counts (the client dialects' in src/wire/usage.ts); no code past it asks who counted.
 */
export interface Usage {
  input: InputTokens;
  output: number;
  /** The model the upstream's reply says answered (its `model`), when it names one: cost and the usage record follow it (contract 12). */
  model?: string;
}

export interface InputTokens {
  total: number;
  cacheRead: number;
  cacheWrite: number;
}

export const uncachedInput = (input: InputTokens) => Math.max(0, input.total - input.cacheRead - input.cacheWrite);

export interface ChatReply {
  id?: string;
  content: Part[];
  finish: Finish;
  usage?: Usage;
}

/** What a streamed reply is made of; tool calls are numbered from 0 in the order they start. */
export type StreamEvent =
  /** `usage`: what is known at the start (most upstreams: the input). */
  | { type: "start"; id?: string; usage?: Partial<Usage> }
  | { type: "text"; text: string }
  /** Reasoning text as it streams; `signature` closes a reasoning block that can be sent back. */
  | { type: "reasoning"; text: string; signature?: string }
  | { type: "tool_call"; index: number; id: string; name: string }
  | { type: "tool_args"; index: number; text: string }
  | { type: "finish"; finish: Finish }
  /** Usage as it becomes known, the input or the output or both: a later report of either replaces an earlier one. */
  | { type: "usage"; usage: Partial<Usage> };

/** One server-sent event as the reply format writes it. */
export interface SseEvent {
  event?: string;
  data: unknown;
}

export const textOf = (parts: Part[]): string =>
  parts.map((p) => (p.type === "text" ? p.text : "")).join("");

/** A user or assistant turn: not a system message said in the conversation. */
export const isTurn = (m: Message): m is Turn => m.role !== "system";

/** The request as an upstream with system text only at the top reads it: the conversation's system messages join that text, in order. */
export function systemOnTop(request: ChatRequest): { system: string[]; messages: Turn[] } {
  if (request.messages.every(isTurn)) return { system: request.system, messages: request.messages as Turn[] };
  const system = [...request.system];
  for (const m of request.messages) if (!isTurn(m)) for (const p of m.content) if (p.type === "text") system.push(p.text);
  return { system, messages: request.messages.filter(isTurn) };
}

/** Two turns of one role in a row become one, for upstreams that refuse them (a system message taken out of the middle leaves such pairs). */
export function alternating(messages: Turn[]): Turn[] {
  const merged: Turn[] = [];
  for (const message of messages) {
    const last = merged.at(-1);
    if (last?.role === message.role) merged[merged.length - 1] = { role: last.role, content: [...last.content, ...message.content] };
    else merged.push(message);
  }
  return merged;
}

/** Where system texts said in the conversation go: on top before its first turn, else in place (an empty one nowhere). */
export function pushSystem(system: string[], messages: Message[], texts: string[]) {
  if (texts.every((text) => text === "")) return;
  if (messages.length === 0) system.push(...texts);
  else messages.push({ role: "system", content: texts.map((text) => ({ type: "text", text })) });
}

/** An embeddings request (contract 18): texts to turn into vectors. */
export interface EmbeddingRequest {
  model?: string;
  /**
   * The texts, in order; token arrays (which only an OpenAI-compatible upstream reads, and gets as
   * sent) are not here: `tokens` says they were sent.
   */
  texts: string[];
  tokens: boolean;
  /** The length of each vector, for models that can shorten theirs. */
  dimensions?: number;
  /** What the texts are for, for models that ask (Cohere's `input_type`): `search_document` unless said. */
  inputType?: string;
}

/** The vectors, one per text in order, and the tokens the upstream counted. */
export interface Embeddings {
  vectors: number[][];
  inputTokens: number;
}
