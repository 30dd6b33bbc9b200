import { scripted, stall } from "./scripted.ts";

/**
 * A fake Anthropic API on 127.0.0.1: `POST /v1/messages` (JSON, and SSE with Anthropic's real event
 * sequence: message_start, ping, blocks, message_delta, message_stop), `/v1/messages/count_tokens`,
 * `GET /v1/models` in pages, and errors in Anthropic's envelope (`529 overloaded_error`, `429
 * rate_limit_error` with retry-after, …). It checks `x-api-key` and `anthropic-version` as the real
 * API does. Each request takes the next script (or the default reply) and is recorded, body as sent.
 */

type Json = Record<string, any>;

export type AnthropicScript =
  | { kind: "json"; body: Json }
  /** Events as the API sends them (`{type, …}`); the SSE name is the type. */
  | { kind: "stream"; events: Json[]; gapMs?: number; stallAfter?: number; breakAfter?: number; endAfter?: number; errorAfter?: number }
  | { kind: "error"; status: number; type: string; message: string; headers?: Record<string, string> }
  /** A 200 stream whose first event is an error (the API sends overloads so, too). */
  | { kind: "stream-error"; type: string; message: string }
  | { kind: "hang" };

export interface AnthropicReceived {
  path: string;
  headers: Headers;
  body: Json;
  /** The body exactly as it came. */
  raw: string;
}

export const FAKE_ANTHROPIC_KEY = "sk-ant-fake-0123456789";

/** The models GET /v1/models lists, newest first, as the API orders them. */
export const FAKE_ANTHROPIC_MODELS = [
  { id: "claude-sonnet-4-5-20250929", display_name: "Claude Sonnet 4.5", created_at: "2025-09-29T00:00:00Z" },
  { id: "claude-haiku-4-5-20251001", display_name: "Claude Haiku 4.5", created_at: "2025-10-15T00:00:00Z" },
  { id: "claude-opus-4-1-20250805", display_name: "Claude Opus 4.1", created_at: "2025-08-05T00:00:00Z" },
];

const error = (status: number, type: string, message: string, headers: Record<string, string> = {}) =>
  Response.json({ type: "error", error: { type, message }, request_id: "req_fake01" }, { status, headers: { "request-id": "req_fake01", ...headers } });

export async function startFakeAnthropic() {
  const { take, controls } = scripted<AnthropicScript, AnthropicReceived>();
  const { received, state } = controls;
  /** GET /v1/models: these, `pageSize` a page; `calls` counts the pages asked for. */
  const models = { list: [...FAKE_ANTHROPIC_MODELS], pageSize: 2, calls: 0 };
  /** While set, every Messages call answers with it (an outage), scripts or not; an error one, count_tokens too. */
  const outage: { script?: AnthropicScript } = {};
  /** The next count_tokens calls answer these errors, in turn, before counting. */
  const countErrors: Extract<AnthropicScript, { kind: "error" }>[] = [];
  /** Opt-in: without a script, Messages calls are answered by this (a prompt cache: prompt-cache.ts). */
  const cache: { reply?: (body: Json) => AnthropicScript } = {};

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      if (request.headers.get("x-api-key") !== FAKE_ANTHROPIC_KEY) return error(401, "authentication_error", "invalid x-api-key");
      if (!request.headers.get("anthropic-version")) return error(400, "invalid_request_error", "anthropic-version: header is required");
      if (request.method === "GET" && url.pathname === "/v1/models") return listModels(url);
      const raw = await request.text();
      const body = raw ? JSON.parse(raw) : {};
      received.push({ path: url.pathname, headers: request.headers, body, raw });
      if (url.pathname === "/v1/messages/count_tokens") {
        const down = outage.script ?? countErrors.shift();
        return down?.kind === "error" ? error(down.status, down.type, down.message) : Response.json({ input_tokens: countOf(raw) });
      }
      if (url.pathname !== "/v1/messages") return error(404, "not_found_error", `Not found: ${url.pathname}`);
      const script = outage.script ?? take() ?? cache.reply?.(body) ?? (body.stream ? { kind: "stream", events: messageEvents(body.model) } : { kind: "json", body: message(body.model) });
      switch (script.kind) {
        case "error":
          return error(script.status, script.type, script.message, script.headers);
        case "hang":
          return stall(request).then(() => new Response(null));
        case "json":
          return Response.json(script.body, { headers: { "request-id": "req_fake01" } });
        case "stream-error":
          return sse(request, { kind: "stream", events: [{ type: "error", error: { type: script.type, message: script.message } }] });
        case "stream":
          return sse(request, script);
      }
    },
  });

  function listModels(url: URL): Response {
    models.calls++;
    const after = url.searchParams.get("after_id");
    const from = after ? models.list.findIndex((m) => m.id === after) + 1 : 0;
    const limit = Math.min(Number(url.searchParams.get("limit") ?? 20), models.pageSize);
    const page = models.list.slice(from, from + limit).map((m) => ({ type: "model", ...m }));
    return Response.json({ data: page, has_more: from + limit < models.list.length, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null });
  }

  function sse(request: Request, script: Extract<AnthropicScript, { kind: "stream" }>): Response {
    const encoder = new TextEncoder();
    let i = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (i > 0 && script.gapMs) await Bun.sleep(script.gapMs);
        if (i === script.stallAfter) return stall(request);
        if (i === script.breakAfter) return controller.error(new Error("connection reset"));
        if (i === script.endAfter) return controller.close();
        if (i === script.errorAfter) {
          controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })}\n\n`));
          return controller.close();
        }
        const event = script.events[i++];
        if (!event) return controller.close();
        controller.enqueue(encoder.encode(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`));
      },
      cancel() {
        state.cancelled++;
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream; charset=utf-8", "request-id": "req_fake01" } });
  }

  return {
    url: `http://127.0.0.1:${server.port}`,
    ...controls,
    models,
    outage,
    countErrors,
    cache,
    reset() {
      controls.reset();
      delete outage.script;
      countErrors.length = 0;
    },
    /** The next calls answer 529 overloaded_error (Anthropic's busy signal). */
    overloaded: (times = 1) => controls.next(...Array.from({ length: times }, () => ({ kind: "error" as const, status: 529, type: "overloaded_error", message: "Overloaded" }))),
    /** The next calls answer 429 rate_limit_error with a retry-after. */
    rateLimited: (times = 1, retryAfter = "1") =>
      controls.next(...Array.from({ length: times }, () => ({ kind: "error" as const, status: 429, type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit", headers: { "retry-after": retryAfter } }))),
    stop: () => server.stop(true),
  };
}

export type FakeAnthropic = Awaited<ReturnType<typeof startFakeAnthropic>>;

/** A count that depends on the body, so a test can tell it was read. */
export const countOf = (raw: string) => 11 + (raw.length % 50);

export const message = (model = "claude-sonnet-4-5-20250929", content: Json[] = [{ type: "text", text: "Hello from Anthropic" }], stop = "end_turn") => ({
  id: "msg_01AnthropicFake", type: "message", role: "assistant", model, content, stop_reason: stop, stop_sequence: null,
  usage: { input_tokens: 21, cache_creation_input_tokens: 0, cache_read_input_tokens: 2048, output_tokens: 6, service_tier: "standard" },
});

/** Anthropic's stream as the API sends it: a ping after message_start, message_delta with the output count. */
export function messageEvents(model = "claude-sonnet-4-5-20250929", texts = ["Hello", " from", " Anthropic"], thinking?: string[]): Json[] {
  const events: Json[] = [
    { type: "message_start", message: { id: "msg_01AnthropicFake", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 21, cache_creation_input_tokens: 100, cache_read_input_tokens: 2048, output_tokens: 1, service_tier: "standard" } } },
    { type: "ping" },
  ];
  let index = 0;
  if (thinking) {
    events.push(
      { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } },
      ...thinking.map((text) => ({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: text } })),
      { type: "content_block_delta", index, delta: { type: "signature_delta", signature: "ErUBCkYIBhgCIkAnthropicSig==" } },
      { type: "content_block_stop", index },
    );
    index++;
  }
  events.push(
    { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    ...texts.map((text) => ({ type: "content_block_delta", index, delta: { type: "text_delta", text } })),
    { type: "content_block_stop", index },
    { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 6 } },
    { type: "message_stop" },
  );
  return events;
}
