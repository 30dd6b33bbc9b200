/**
 * A scripted OpenAI server on 127.0.0.1 (Chat Completions, the Responses API, legacy completions and
 * embeddings): real HTTP, real
 * JSON and SSE. Each request takes the next script from the queue (or the default reply) and is
 * recorded; what it sent for /v1/responses is kept too, to compare with what a client got.
 */

import { scripted, stall } from "./scripted.ts";

/** Prompt tokens (the cached ones included, as OpenAI counts them), completion tokens, and of the prompt tokens how many were cached. */
export type FakeUsage = [prompt: number, completion: number, cached?: number];

export type OpenAIScript =
  | { kind: "reply"; text?: string; toolCalls?: { id: string; name: string; arguments: string }[]; finish?: string; usage?: FakeUsage | null }
  | { kind: "stream"; chunks?: string[]; toolCalls?: { id: string; name: string; arguments: string[] }[]; finish?: string; usage?: FakeUsage | null; gapMs?: number; firstByteMs?: number; breakAfter?: number; errorAfter?: number; endAfter?: number; stallAfter?: number }
  | { kind: "error"; status: number; message: string; headers?: Record<string, string> }
  /** Any body at all, as given: HTML, truncated JSON, `null`, a wrong shape. */
  | { kind: "raw"; body: string; status?: number; contentType?: string }
  /** Headers and the first bytes of the body, then a reset. */
  | { kind: "reset"; bytes: string; contentType?: string }
  | { kind: "hang" };

export interface Received {
  path: string;
  headers: Headers;
  body: Record<string, any>;
  raw: string;
}

export async function startFakeOpenAI() {
  const { take, controls } = scripted<OpenAIScript, Received>();
  const { received, state } = controls;
  const encoder = new TextEncoder();
  /** The bodies sent for /v1/responses, whole (a stream's bytes as far as they went). */
  const sent: string[] = [];
  /** What GET /v1/models answers: these ids, or a 503 while failing. */
  const catalogue = { ids: ["gpt-4o", "gpt-4o-mini"], failing: false };
  /** The model its replies name: the one asked for, or, set, the one it runs whatever was asked (as llama.cpp answers). */
  const runs: { model?: string } = {};

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      // Model discovery asks in the background; it is not one of the calls tests count.
      if (request.method === "GET" && path === "/v1/models") {
        if (catalogue.failing) return Response.json({ error: { message: "models are down" } }, { status: 503 });
        return Response.json({ object: "list", data: catalogue.ids.map((id) => ({ id, object: "model", created: 1, owned_by: "local" })) });
      }
      const raw = await request.text();
      const body = raw ? JSON.parse(raw) : {};
      received.push({ path, headers: request.headers, body, raw });
      const responses = path === "/v1/responses";
      const legacy = path === "/v1/completions";
      const embeddings = path === "/v1/embeddings";
      // OpenAI's own compaction: the user messages, then one opaque compaction item.
      if (path === "/v1/responses/compact") {
        const users = Array.isArray(body.input) ? body.input.filter((item: any) => item.role === "user") : [];
        return Response.json({ id: "resp_fake_compact", object: "response.compaction", created_at: 1, output: [...users, { id: "cmp_fake", type: "compaction", encrypted_content: "gAAAAfakeOpenAICompaction" }], usage: { input_tokens: 11, output_tokens: 7, total_tokens: 18, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } });
      }
      if (path !== "/v1/chat/completions" && !responses && !legacy && !embeddings) return Response.json({ error: { message: "not found" } }, { status: 404 });
      const script = take() ?? (body.stream ? { kind: "stream" } : { kind: "reply" });
      const model = runs.model ?? body.model;
      if (responses && script.kind === "reply") return sendJson(responseObject(model, script, "completed"));
      if (responses && script.kind === "stream") return responsesSse(request, model, script);
      if (embeddings && script.kind === "reply") return Response.json(embeddingList(body, script));
      if (legacy && script.kind === "reply") return Response.json(textCompletion(model, script));
      switch (script.kind) {
        case "error":
          return Response.json({ error: { message: script.message, type: "upstream_error", param: null, code: null } }, { status: script.status, headers: script.headers });
        case "hang":
          return new Promise<Response>((resolve) => request.signal.addEventListener("abort", () => resolve(new Response(null))));
        case "reply":
          return Response.json(completion(model, script));
        case "raw":
          return new Response(script.body, { status: script.status ?? 200, headers: { "content-type": script.contentType ?? "application/json" } });
        case "reset":
          return resetting(script.bytes, script.contentType ?? "application/json");
        case "stream":
          return sse(request, model, script, body);
      }
    },
  });

  function sse(request: Request, model: string, script: Extract<OpenAIScript, { kind: "stream" }>, body: any) {
    const legacy = new URL(request.url).pathname === "/v1/completions";
    const id = legacy ? "cmpl-fake123" : "chatcmpl-fake123";
    // The legacy endpoint streams text_completion chunks: the text, not a delta.
    const chunk = (delta: { content?: string; [key: string]: unknown }, finish: string | null = null) => legacy
      ? { id, object: "text_completion", created: 1, model, choices: [{ text: delta.content ?? "", index: 0, logprobs: null, finish_reason: finish }] }
      : { id, object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] };
    const frames: string[] = legacy ? [] : [JSON.stringify(chunk({ role: "assistant", content: "" }))];
    for (const text of script.chunks ?? ["Hello", " from", " OpenAI"]) frames.push(JSON.stringify(chunk({ content: text })));
    (script.toolCalls ?? []).forEach((call, index) => {
      frames.push(JSON.stringify(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] })));
      for (const part of call.arguments) frames.push(JSON.stringify(chunk({ tool_calls: [{ index, function: { arguments: part } }] })));
    });
    frames.push(JSON.stringify(chunk({}, script.finish ?? (script.toolCalls ? "tool_calls" : "stop"))));
    const usage = script.usage === undefined ? DEFAULT_USAGE : script.usage;
    if (usage && body.stream_options?.include_usage) {
      frames.push(JSON.stringify({ id, object: legacy ? "text_completion" : "chat.completion.chunk", created: 1, model, choices: [], usage: chatUsage(usage) }));
    }
    frames.push("[DONE]");

    let i = 0;
    const stream = new ReadableStream<Uint8Array>({
      async start() {
        if (script.firstByteMs) await Bun.sleep(script.firstByteMs);
      },
      async pull(controller) {
        if (i > 0 && script.gapMs) await Bun.sleep(script.gapMs);
        if (i === script.stallAfter) return stall(request);
        if (script.breakAfter !== undefined && i === script.breakAfter) return controller.error(new Error("connection reset"));
        if (script.endAfter !== undefined && i === script.endAfter) return controller.close();
        if (script.errorAfter !== undefined && i === script.errorAfter) {
          controller.enqueue(encoder.encode(`data: ${JSON.stringify({ error: { message: "The server had an error while processing your request.", type: "server_error" } })}\n\n`));
          return controller.close();
        }
        const frame = frames[i++];
        if (frame === undefined) return controller.close();
        controller.enqueue(encoder.encode(`data: ${frame}\n\n`));
      },
      cancel() {
        state.cancelled++;
      },
    });
    request.signal.addEventListener("abort", () => state.cancelled++);
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  }

  function sendJson(body: unknown) {
    const text = JSON.stringify(body);
    sent.push(text);
    return new Response(text, { headers: { "content-type": "application/json" } });
  }

  /** The Responses API's event grammar, as api.openai.com streams it, with the script's faults. */
  function responsesSse(request: Request, model: string, script: Extract<OpenAIScript, { kind: "stream" }>) {
    const frames = responseEvents(model, script).map((data, sequence_number) => `event: ${data.type}\ndata: ${JSON.stringify({ ...data, sequence_number })}\n\n`);
    const index = sent.push("") - 1;
    let i = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (i > 0 && script.gapMs) await Bun.sleep(script.gapMs);
        if (i === script.stallAfter) return stall(request);
        if (script.breakAfter !== undefined && i === script.breakAfter) return controller.error(new Error("connection reset"));
        if (script.endAfter !== undefined && i === script.endAfter) return controller.close();
        let frame = frames[i++];
        if (script.errorAfter !== undefined && i - 1 === script.errorAfter) {
          frame = `event: error\ndata: ${JSON.stringify({ type: "error", sequence_number: i - 1, code: "server_error", message: "The server had an error while processing your request.", param: null })}\n\n`;
          i = frames.length;
        }
        if (frame === undefined) return controller.close();
        sent[index] += frame;
        controller.enqueue(encoder.encode(frame));
      },
      cancel() {
        state.cancelled++;
      },
    });
    request.signal.addEventListener("abort", () => state.cancelled++);
    return new Response(stream, { headers: { "content-type": "text/event-stream; charset=utf-8" } });
  }

  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    ...controls,
    sent,
    catalogue,
    runs,
    reset() {
      controls.reset();
      delete runs.model;
      sent.length = 0;
    },
    stop: () => server.stop(true),
  };
}

export type FakeOpenAI = Awaited<ReturnType<typeof startFakeOpenAI>>;

/** A body that sends its first bytes and then breaks, as a reset connection does. */
function resetting(bytes: string, contentType: string) {
  let sent = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return controller.error(new Error("connection reset"));
      sent = true;
      controller.enqueue(new TextEncoder().encode(bytes));
    },
  });
  return new Response(body, { headers: { "content-type": contentType } });
}

const DEFAULT_USAGE: FakeUsage = [11, 7];

const chatUsage = ([prompt, completion, cached]: FakeUsage) => ({
  prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion,
  ...(cached !== undefined ? { prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 } } : {}),
});

function completion(model: string, script: Extract<OpenAIScript, { kind: "reply" }>) {
  const usage = script.usage === undefined ? DEFAULT_USAGE : script.usage;
  const calls = script.toolCalls?.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
  return {
    id: "chatcmpl-fake123",
    object: "chat.completion",
    created: 1,
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: script.text ?? (calls ? null : "Hello from OpenAI"), ...(calls ? { tool_calls: calls } : {}) },
        finish_reason: script.finish ?? (calls ? "tool_calls" : "stop"),
      },
    ],
    ...(usage ? { usage: chatUsage(usage) } : {}),
  };
}

/** The legacy completion: `text` is the completion (a fill-in-the-middle one, for a prompt and a suffix). */
function textCompletion(model: string, script: Extract<OpenAIScript, { kind: "reply" }>) {
  const usage = script.usage === undefined ? DEFAULT_USAGE : script.usage;
  return {
    id: "cmpl-fake123", object: "text_completion", created: 1, model,
    choices: [{ text: script.text ?? "Hello from OpenAI", index: 0, logprobs: null, finish_reason: script.finish ?? "stop" }],
    ...(usage ? { usage: chatUsage(usage) } : {}),
  };
}

/**
 * OpenAI's embeddings list, as the server answers: a vector per input (a token array counts as one
 * input), `dimensions` long (8 unless asked), floats or base64 of little-endian float32.
 */
function embeddingList(body: any, script: Extract<OpenAIScript, { kind: "reply" }>) {
  const input = body.input;
  const inputs: (string | number[])[] = typeof input === "string" ? [input] : Array.isArray(input) && input.every((v: unknown) => typeof v === "number") ? [input] : input;
  const vectors = inputs.map((one) => fakeEmbedding(typeof one === "string" ? one : one.join(" "), body.dimensions ?? 8));
  const tokens = script.usage === undefined ? inputs.reduce((sum: number, one) => sum + (typeof one === "string" ? one.split(/\s+/).length : one.length), 0) : script.usage?.[0] ?? 0;
  return {
    object: "list",
    data: vectors.map((vector, index) => ({ object: "embedding", index, embedding: body.encoding_format === "base64" ? Buffer.from(Float32Array.from(vector).buffer).toString("base64") : vector })),
    model: body.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

/** Unit vectors whose first number grows with the text's length: a test can tell which input got which. */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const raw = Array.from({ length: dimensions }, (_, i) => (i === 0 ? text.length + 1 : 1));
  const norm = Math.sqrt(raw.reduce((sum, x) => sum + x * x, 0));
  return raw.map((x) => x / norm);
}

type Script = Extract<OpenAIScript, { kind: "reply" | "stream" }>;

const RESPONSE_ID = "resp_fake123";
const MESSAGE_ID = "msg_fake123";

function outputItems(script: Script, status: string) {
  const text = script.kind === "reply" ? script.text ?? (script.toolCalls ? undefined : "Hello from OpenAI") : (script.chunks ?? ["Hello", " from", " OpenAI"]).join("");
  const items: object[] = text === undefined || text === "" ? [] : [{ id: MESSAGE_ID, type: "message", status, content: [{ type: "output_text", annotations: [], logprobs: [], text }], role: "assistant" }];
  (script.toolCalls ?? []).forEach((call, i) => {
    const args = Array.isArray(call.arguments) ? call.arguments.join("") : call.arguments;
    items.push({ id: `fc_fake${i}`, type: "function_call", status, arguments: args, call_id: call.id, name: call.name });
  });
  return items;
}

/** A response object with the fields api.openai.com sends, in its order. */
function responseObject(model: string, script: Script, status: string, output = outputItems(script, "completed")) {
  const usage = script.usage === undefined ? DEFAULT_USAGE : script.usage;
  return {
    id: RESPONSE_ID, object: "response", created_at: 1, status, background: false, error: null, incomplete_details: null,
    instructions: null, max_output_tokens: null, model, output, parallel_tool_calls: true, previous_response_id: null,
    reasoning: { effort: null, summary: null }, store: true, temperature: 1, text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto", tools: [], top_p: 1, truncation: "disabled",
    usage: status === "completed" && usage
      ? { input_tokens: usage[0], input_tokens_details: { cached_tokens: usage[2] ?? 0 }, output_tokens: usage[1], output_tokens_details: { reasoning_tokens: 0 }, total_tokens: usage[0] + usage[1] }
      : null,
    user: null, metadata: {},
  };
}

/** Every event of a streamed response, without its sequence number. */
function responseEvents(model: string, script: Extract<OpenAIScript, { kind: "stream" }>): Record<string, any>[] {
  const events: Record<string, any>[] = [
    { type: "response.created", response: responseObject(model, script, "in_progress", []) },
    { type: "response.in_progress", response: responseObject(model, script, "in_progress", []) },
  ];
  const done = outputItems(script, "completed") as Record<string, any>[];
  let index = 0;
  const chunks = script.chunks ?? ["Hello", " from", " OpenAI"];
  if (chunks.join("")) {
    const item = done[index]!;
    const base = { item_id: item.id, output_index: index };
    events.push({ type: "response.output_item.added", output_index: index, item: { ...item, status: "in_progress", content: [] } });
    events.push({ type: "response.content_part.added", ...base, content_index: 0, part: { type: "output_text", annotations: [], logprobs: [], text: "" } });
    for (const delta of chunks) events.push({ type: "response.output_text.delta", ...base, content_index: 0, delta, logprobs: [], obfuscation: "x1" });
    events.push({ type: "response.output_text.done", ...base, content_index: 0, text: chunks.join(""), logprobs: [] });
    events.push({ type: "response.content_part.done", ...base, content_index: 0, part: item.content[0] });
    events.push({ type: "response.output_item.done", output_index: index, item });
    index++;
  }
  for (const call of script.toolCalls ?? []) {
    const item = done[index]!;
    events.push({ type: "response.output_item.added", output_index: index, item: { ...item, status: "in_progress", arguments: "" } });
    for (const delta of call.arguments) events.push({ type: "response.function_call_arguments.delta", item_id: item.id, output_index: index, delta, obfuscation: "x1" });
    events.push({ type: "response.function_call_arguments.done", item_id: item.id, output_index: index, arguments: item.arguments });
    events.push({ type: "response.output_item.done", output_index: index, item });
    index++;
  }
  events.push({ type: "response.completed", response: responseObject(model, script, "completed", done) });
  return events;
}
