import type { ProviderName } from "../config.ts";
import type { ChatReply, ChatRequest, StreamEvent, Usage } from "../ir.ts";

/** A client dialect a provider may take in its own wire format, with no conversion. */
export type Dialect = "openai-chat" | "openai-responses" | "anthropic-messages";

/** A same-family call: the client's body goes up as sent (or with the few edits the upstream needs). */
export interface NativeCall {
  body: string;
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
 * whole and shape-checked by the provider; a stream's bytes are handed on as they come.
 */
export type NativeReply =
  | { kind: "json"; bytes: ArrayBuffer; contentType: string; usage?: Usage }
  /** `failure` tells what an error reading the body means (a dropped connection, silence). */
  | { kind: "stream"; body: ReadableStream<Uint8Array>; contentType: string; failure: (error: unknown) => Error };

/** A provider turns the internal request into its wire call, and the answer back into IR. */
export interface Provider {
  readonly name: ProviderName;
  /** How errors and logs name it. */
  readonly label: string;
  complete(request: ChatRequest, model: string, signal: AbortSignal): Promise<ChatReply>;
  stream(request: ChatRequest, model: string, signal: AbortSignal): AsyncIterable<StreamEvent>;
  /** Same-family fast paths, by the client dialect they take. */
  native?: Partial<Record<Dialect, (call: NativeCall) => Promise<NativeReply>>>;
  /**
   * Whether the native call for `dialect` takes this upstream model id. Absent: any model, but only
   * as the client named it (the body goes up as sent, model included, so an alias cannot apply).
   */
  takesNative?(dialect: Dialect, model: string): boolean;
  /** Token counts the upstream itself gives, for a request in a client dialect (the body as sent). */
  countTokens?: Partial<Record<Dialect, (call: NativeCall) => Promise<number>>>;
}
