/**
 * The benchmark's upstream: OpenAI chat completions and responses, Bedrock InvokeModel(+WithResponseStream)
 * and Converse, and the Anthropic API's Messages on one port, as cheap as a server can be: replies are serialised once, stream frames
 * encoded once. Streams are paced (TTFT_MS before the first chunk, GAP_MS between chunks) when the
 * request body mentions "-paced" (a model id such as gpt-4o-mini-paced); otherwise every chunk is
 * sent as soon as the reader asks, which is what a throughput run wants.
 * Env: PORT, TTFT_MS (time to first token), CHUNKS, GAP_MS.
 */
import { EventStreamCodec } from "@smithy/core/event-streams";

const TTFT = Number(process.env.TTFT_MS ?? 20);
const CHUNKS = Number(process.env.CHUNKS ?? 50);
const GAP = Number(process.env.GAP_MS ?? 2);
const encoder = new TextEncoder();

const completion = JSON.stringify({
  id: "chatcmpl-bench", object: "chat.completion", created: 1, model: "gpt-4o-mini",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello from the bench upstream." }, finish_reason: "stop" }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
});
const chunk = (delta: object, finish: string | null = null) =>
  encoder.encode(`data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
const sseFrames = [
  chunk({ role: "assistant", content: "" }),
  ...Array.from({ length: CHUNKS }, (_, i) => chunk({ content: `tok${i} ` })),
  chunk({}, "stop"),
  encoder.encode(`data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [], usage: { prompt_tokens: 12, completion_tokens: CHUNKS, total_tokens: 12 + CHUNKS } })}\n\n`),
  encoder.encode("data: [DONE]\n\n"),
];

const responseObject = (status: string, output: object[]) => ({
  id: "resp_bench", object: "response", created_at: 1, status, error: null, incomplete_details: null, model: "gpt-4o-mini", output,
  usage: status === "completed" ? { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: CHUNKS, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 + CHUNKS } : null,
});
const message = (text: string) => ({ id: "msg_bench", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] });
const response = JSON.stringify(responseObject("completed", [message("Hello from the bench upstream.")]));
let sequence = 0;
const event = (type: string, fields: object) => encoder.encode(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`);
const item = { item_id: "msg_bench", output_index: 0 };
const streamedText = Array.from({ length: CHUNKS }, (_, i) => `tok${i} `).join("");
const responseFrames = [
  event("response.created", { response: responseObject("in_progress", []) }),
  event("response.in_progress", { response: responseObject("in_progress", []) }),
  event("response.output_item.added", { output_index: 0, item: { ...message(""), status: "in_progress", content: [] } }),
  event("response.content_part.added", { ...item, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }),
  ...Array.from({ length: CHUNKS }, (_, i) => event("response.output_text.delta", { ...item, content_index: 0, delta: `tok${i} ` })),
  event("response.output_text.done", { ...item, content_index: 0, text: streamedText }),
  event("response.content_part.done", { ...item, content_index: 0, part: { type: "output_text", text: streamedText, annotations: [] } }),
  event("response.output_item.done", { output_index: 0, item: message(streamedText) }),
  event("response.completed", { response: responseObject("completed", [message(streamedText)]) }),
];

const anthropic = JSON.stringify({
  id: "msg_bench", type: "message", role: "assistant", model: "claude", content: [{ type: "text", text: "Hello from the bench upstream." }],
  stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 12, output_tokens: 7 },
});
const codec = new EventStreamCodec((b) => new TextDecoder().decode(b), (s) => encoder.encode(s));
const frame = (event: object) => codec.encode({
  headers: { ":event-type": { type: "string", value: "chunk" }, ":content-type": { type: "string", value: "application/json" }, ":message-type": { type: "string", value: "event" } },
  body: encoder.encode(JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString("base64") })),
});
const bedrockFrames = [
  frame({ type: "message_start", message: { id: "msg_bench", type: "message", role: "assistant", content: [], usage: { input_tokens: 12, output_tokens: 1 } } }),
  frame({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
  ...Array.from({ length: CHUNKS }, (_, i) => frame({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: `tok${i} ` } })),
  frame({ type: "content_block_stop", index: 0 }),
  frame({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: CHUNKS } }),
  frame({ type: "message_stop" }),
];

const anthropicMessage = JSON.stringify({
  id: "msg_bench", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text: "Hello from the bench upstream." }],
  stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 7 },
});
const sse = (event: { type: string }) => encoder.encode(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
const anthropicFrames = [
  sse({ type: "message_start", message: { id: "msg_bench", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } } } as { type: string }),
  sse({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } as { type: string }),
  ...Array.from({ length: CHUNKS }, (_, i) => sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: `tok${i} ` } } as { type: string })),
  sse({ type: "content_block_stop", index: 0 } as { type: string }),
  sse({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: CHUNKS } } as { type: string }),
  sse({ type: "message_stop" }),
];

const converse = JSON.stringify({
  output: { message: { role: "assistant", content: [{ text: "Hello from the bench upstream." }] } },
  stopReason: "end_turn", usage: { inputTokens: 12, outputTokens: 7, totalTokens: 19 }, metrics: { latencyMs: 1 },
});
const json = (text: string) => new Response(text, { headers: { "content-type": "application/json" } });

function paced(frames: Uint8Array[], type: string, slow: boolean): Response {
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (slow) await Bun.sleep(i === 0 ? TTFT : GAP);
      const next = frames[i++];
      if (next) controller.enqueue(next);
      else controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": type } });
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 0),
  idleTimeout: 0,
  async fetch(request) {
    const path = new URL(request.url).pathname;
    const body = await request.text();
    const slow = body.includes("-paced");
    const stream = body.includes('"stream":true');
    if (path === "/v1/messages") return stream ? paced(anthropicFrames, "text/event-stream", slow) : json(anthropicMessage);
    if (path.endsWith("/chat/completions")) return stream ? paced(sseFrames, "text/event-stream", slow) : json(completion);
    if (path.endsWith("/responses")) return stream ? paced(responseFrames, "text/event-stream", slow) : json(response);
    if (path.endsWith("/invoke")) return json(anthropic);
    if (path.endsWith("/converse")) return json(converse);
    if (path.endsWith("/invoke-with-response-stream")) return paced(bedrockFrames, "application/vnd.amazon.eventstream", slow);
    return new Response("not found", { status: 404 });
  },
});
console.log(`listening ${server.port}`);
