import type { Json } from "../lib/read.ts";
import type { ByteSource } from "../lib/sse.ts";
import type { ChatReply, ChatRequest, EmbeddingRequest, Embeddings, InputTokens, StreamEvent, Usage } from "../ir.ts";
import type { Dialect } from "../wire/codec.ts";

export type { Dialect };

/** A same-family call: the client's body goes up as sent (or with the few edits the upstream needs). */
export interface NativeCall {
  body: string;
  /** The same body, parsed (the caller has it already): a provider that edits it need not parse it again. */
  json?: Json;
  model: string;
  /** The id the client asked for: a native reply that names its model names this one. */
  requested: string;
  stream: boolean;
  signal: AbortSignal;
  /** The client's request headers (`anthropic-beta`, …). */
  headers?: Headers;
}

/**
 * A native answer: the upstream's reply, already in the client's dialect. A JSON reply is read
 * whole (as text: the cheapest read) and shape-checked by the provider; a stream's bytes are
 * handed on as they come.
 */
export type NativeReply =
  | { kind: "json"; body: string | ArrayBuffer; contentType: string; usage?: Usage }
  /**
   * `body`: the upstream's body, or the provider's own reader of it (no stream of its own between);
   * `failure` tells what an error reading it means (a dropped connection, silence).
   */
  | {
      kind: "stream"; body: ByteSource; contentType: string; failure: (error: unknown) => Error;
      /** The input's tokens, read at the stream's start, for a dialect whose last events leave them out (Anthropic's). */
      input?: () => InputTokens | undefined;
    };

/** A provider turns the internal request into its wire call, and the answer back into IR. */
export interface Provider {
  /** The upstream's name. */
  readonly name: string;
  /** How errors and logs name it. */
  readonly label: string;
  /** Its answers cost nothing, whatever model id they were asked for (the mock): the usage record prices them at 0. */
  readonly free?: boolean;
  complete(request: ChatRequest, model: string, signal: AbortSignal): Promise<ChatReply>;
  stream(request: ChatRequest, model: string, signal: AbortSignal): AsyncIterable<StreamEvent>;
  /** Same-family fast paths, by the client dialect they take. */
  native?: Partial<Record<Dialect, (call: NativeCall) => Promise<NativeReply>>>;
  /**
   * Whether the native call for `dialect` takes this upstream model id. Absent: any model, but only
   * as the client named it (the body goes up as sent, model included, so an alias cannot apply).
   */
  takesNative?(dialect: Dialect, model: string): boolean;
  /** Embeddings converted to the upstream's own call (contract 18); an OpenAI-compatible one takes them natively instead. */
  embed?(request: EmbeddingRequest, model: string, signal: AbortSignal): Promise<Embeddings>;
  /** Token counts the upstream itself gives, for a request in a client dialect (the body as sent). */
  countTokens?: Partial<Record<Dialect, (call: NativeCall) => Promise<number>>>;
}

/**
 * Whether the client's own body goes up to `provider` as `model`: the one decision for chat and
 * count_tokens. A provider that does not say takes it as the client named the model, or, for a
 * request only its own API serves (`onlyNative`), under another id (the caller writes it in).
 */
export function takesNative(provider: Provider, dialect: Dialect, model: string, asked: string | undefined, onlyNative = false): boolean {
  return provider.takesNative ? provider.takesNative(dialect, model) : model === asked || onlyNative;
}
