import { sseBytes } from "../../wire/codec.ts";
import { completions } from "../../wire/completions/codec.ts";
import type { ChatReply, ChatRequest, StreamEvent } from "../../ir.ts";
import type { NativeCall, NativeReply } from "../provider.ts";

/**
 * The mock's legacy completions: its script (the prompt echoed back) in OpenAI's
 * `text_completion` shape, as the bytes an OpenAI-compatible server would send.
 */
export async function textCompletion(call: NativeCall, script: (request: ChatRequest) => AsyncGenerator<StreamEvent>, collect: (events: AsyncGenerator<StreamEvent>) => Promise<ChatReply>): Promise<NativeReply> {
  const request = completions.decodeRequest(call.json ?? JSON.parse(call.body));
  if (!call.stream) {
    const reply = await collect(script(request));
    return { kind: "json", body: JSON.stringify(completions.encodeReply(reply, call.requested)), contentType: "application/json", ...(reply.usage ? { usage: reply.usage } : {}) };
  }
  return { kind: "stream", body: sseBytes(completions.streamEncoder(call.requested, request), script(request)), contentType: "text/event-stream", failure: (error) => error as Error };
}
