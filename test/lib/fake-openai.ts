/**
 * A scripted OpenAI Chat Completions server on 127.0.0.1: real HTTP, real JSON and SSE. Each
 * request takes the next script from the queue (or the default reply) and is recorded.
 */

import { scripted } from "./scripted.ts";

export type OpenAIScript =
  | { kind: "reply"; text?: string; toolCalls?: { id: string; name: string; arguments: string }[]; finish?: string; usage?: [number, number] | null }
  | { kind: "stream"; chunks?: string[]; toolCalls?: { id: string; name: string; arguments: string[] }[]; finish?: string; usage?: [number, number] | null; gapMs?: number; firstByteMs?: number; breakAfter?: number; errorAfter?: number; endAfter?: number }
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
  /** What GET /v1/models answers: these ids, or a 503 while failing. */
  const catalogue = { ids: ["gpt-4o", "gpt-4o-mini"], failing: false };

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
      if (path !== "/v1/chat/completions") return Response.json({ error: { message: "not found" } }, { status: 404 });
      const script = take() ?? (body.stream ? { kind: "stream" } : { kind: "reply" });
      const model = body.model;
      switch (script.kind) {
        case "error":
          return Response.json({ error: { message: script.message, type: "upstream_error" } }, { status: script.status, headers: script.headers });
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
    const id = "chatcmpl-fake123";
    const chunk = (delta: object, finish: string | null = null) =>
      ({ id, object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] });
    const frames: string[] = [JSON.stringify(chunk({ role: "assistant", content: "" }))];
    for (const text of script.chunks ?? ["Hello", " from", " OpenAI"]) frames.push(JSON.stringify(chunk({ content: text })));
    (script.toolCalls ?? []).forEach((call, index) => {
      frames.push(JSON.stringify(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] })));
      for (const part of call.arguments) frames.push(JSON.stringify(chunk({ tool_calls: [{ index, function: { arguments: part } }] })));
    });
    frames.push(JSON.stringify(chunk({}, script.finish ?? (script.toolCalls ? "tool_calls" : "stop"))));
    const usage: [number, number] | null = script.usage === undefined ? [11, 7] : script.usage;
    if (usage && body.stream_options?.include_usage) {
      frames.push(JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model, choices: [], usage: { prompt_tokens: usage[0], completion_tokens: usage[1], total_tokens: usage[0] + usage[1] } }));
    }
    frames.push("[DONE]");

    let i = 0;
    const stream = new ReadableStream<Uint8Array>({
      async start() {
        if (script.firstByteMs) await Bun.sleep(script.firstByteMs);
      },
      async pull(controller) {
        if (i > 0 && script.gapMs) await Bun.sleep(script.gapMs);
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

  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    ...controls,
    catalogue,
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

function completion(model: string, script: Extract<OpenAIScript, { kind: "reply" }>) {
  const usage: [number, number] | null = script.usage === undefined ? [11, 7] : script.usage;
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
    ...(usage ? { usage: { prompt_tokens: usage[0], completion_tokens: usage[1], total_tokens: usage[0] + usage[1] } } : {}),
  };
}
