import type { ChatReply, ChatRequest, StreamEvent } from "../ir.ts";

/** A provider turns the internal request into its wire call, and the answer back into IR. */
export interface Provider {
  complete(request: ChatRequest, model: string, signal: AbortSignal): Promise<ChatReply>;
  stream(request: ChatRequest, model: string, signal: AbortSignal): AsyncIterable<StreamEvent>;
  /** Sends the client's body unchanged and hands back the upstream's response: no conversion needed. */
  passthrough?(body: string, signal: AbortSignal): Promise<Response>;
}
