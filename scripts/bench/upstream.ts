/**
 * The benchmark's upstream: OpenAI chat completions and Bedrock InvokeModel(+WithResponseStream)
 * on one port, as cheap as a server can be: replies are serialised once, stream frames encoded once.
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

function paced(frames: Uint8Array[], type: string): Response {
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await Bun.sleep(i === 0 ? TTFT : GAP);
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
    if (path.endsWith("/chat/completions")) {
      return body.includes('"stream":true') ? paced(sseFrames, "text/event-stream") : new Response(completion, { headers: { "content-type": "application/json" } });
    }
    if (path.endsWith("/invoke")) return new Response(anthropic, { headers: { "content-type": "application/json" } });
    if (path.endsWith("/invoke-with-response-stream")) return paced(bedrockFrames, "application/vnd.amazon.eventstream");
    return new Response("not found", { status: 404 });
  },
});
console.log(`listening ${server.port}`);
