import { scripted, stall } from "./scripted.ts";

/**
 * A fake Gemini API on 127.0.0.1: `models/{m}:generateContent`, `:streamGenerateContent` (SSE with
 * `alt=sse`, else one JSON array, as Google sends them), `:countTokens`, `:batchEmbedContents`,
 * `:embedContent` and `GET /v1beta/models` in pages, errors in Google's envelope. Like the API, it
 * checks `x-goog-api-key` (a bad key is a 400 `API_KEY_INVALID`) and, like Gemini 3, it answers 400
 * to a turn whose function call lacks the `thoughtSignature` it was given. Each request takes the
 * next script (or the default reply) and is recorded. `geminiResponder` is the same API without the
 * key check, for the fake Vertex's Gemini models.
 */

type Json = Record<string, any>;

export type GeminiScript =
  | { kind: "json"; body: Json }
  | { kind: "stream"; chunks: Json[]; breakAfter?: number; stallAfter?: number }
  | { kind: "error"; status: number; message: string; details?: Json[]; headers?: Record<string, string> }
  | { kind: "hang" };

export interface GeminiReceived {
  path: string;
  model: string;
  method: string;
  search: string;
  headers: Headers;
  body: Json;
  raw: string;
}

export const FAKE_GEMINI_KEY = "AIzaFakeGeminiKey0123456789";
export const FAKE_GEMINI_MODELS = ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-pro-preview", "gemini-embedding-001", "text-embedding-004"];

const WORDS: Record<number, string> = { 400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED" };

export const googleError = (status: number, message: string, details?: Json[], headers: Record<string, string> = {}) =>
  Response.json({ error: { code: status, message, status: WORDS[status] ?? "UNKNOWN", ...(details ? { details } : {}) } }, { status, headers });

export const USAGE = { promptTokenCount: 120, candidatesTokenCount: 7, thoughtsTokenCount: 5, cachedContentTokenCount: 100, totalTokenCount: 132 };

export const reply = (parts: Json[] = [{ text: "Hello from Gemini" }], finishReason = "STOP", model = "gemini-2.5-flash") => ({
  candidates: [{ content: { role: "model", parts }, finishReason, index: 0 }],
  usageMetadata: USAGE,
  modelVersion: model,
  responseId: "fakeResponse01",
});

/** A stream as Gemini sends it: text in pieces, usage counted so far in each, the finish and the full usage in the last. */
export function chunks(texts = ["Hello", " from", " Gemini"], model = "gemini-2.5-flash"): Json[] {
  return texts.map((text, i) => ({
    candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0, ...(i === texts.length - 1 ? { finishReason: "STOP" } : {}) }],
    usageMetadata: i === texts.length - 1 ? USAGE : { promptTokenCount: 120, totalTokenCount: 120 },
    modelVersion: model,
    responseId: "fakeResponse01",
  }));
}

/** A count that depends on the body, so a test can tell it was read. */
export const countOf = (raw: string) => 17 + (raw.length % 50);

export function geminiResponder() {
  const { take, controls } = scripted<GeminiScript, GeminiReceived>();
  const { received, state } = controls;
  /** The signatures given, by the call they signed (its id, else its name and arguments). */
  const signatures = new Map<string, string>();
  let signed = 0;
  const byName = (call: Json) => `${call.name}:${JSON.stringify(call.args ?? {})}`;
  const given = (call: Json) => (call.id && signatures.get(`id:${call.id}`)) || signatures.get(byName(call));

  /** Signs the first function call of a reply, as Gemini 3 does. */
  function sign(body: Json): Json {
    const parts: Json[] = body.candidates?.[0]?.content?.parts ?? [];
    const first = parts.find((p) => p.functionCall);
    if (first && !first.thoughtSignature) {
      first.thoughtSignature = `c2lnLTEyMw${++signed}Fake==`;
    }
    for (const p of parts) {
      if (!p.functionCall || !p.thoughtSignature) continue;
      signatures.set(byName(p.functionCall), p.thoughtSignature);
      if (p.functionCall.id) signatures.set(`id:${p.functionCall.id}`, p.thoughtSignature);
    }
    return body;
  }

  /** Gemini 3's check: every call it signed comes back with its signature (or the documented skip value). */
  function unsigned(body: Json): Response | undefined {
    const contents: Json[] = Array.isArray(body.contents) ? body.contents : [];
    for (const [i, content] of contents.entries()) {
      if (content.role !== "model") continue;
      for (const part of content.parts ?? []) {
        const signature = part.functionCall && given(part.functionCall);
        if (signature && part.thoughtSignature !== signature && part.thoughtSignature !== "skip_thought_signature_validator") {
          return googleError(400, `Function call \`${part.functionCall.name}\` in the ${i + 1}. content block is missing a \`thought_signature\`.`);
        }
      }
    }
    return undefined;
  }

  async function respond(request: Request, model: string, method: string): Promise<Response> {
    const url = new URL(request.url);
    const raw = await request.text();
    let body: Json;
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      return googleError(400, "Invalid JSON payload received.");
    }
    received.push({ path: url.pathname, model, method, search: url.search, headers: request.headers, body, raw });
    if (method === "countTokens") return Response.json({ totalTokens: countOf(raw) });
    if (method === "batchEmbedContents" || method === "embedContent") return embeddings(body, method);
    if (method !== "generateContent" && method !== "streamGenerateContent") return googleError(404, `Method ${method} not found.`);
    const refused = unsigned(body);
    if (refused) return refused;
    const streamed = method === "streamGenerateContent";
    const script = take() ?? (streamed ? { kind: "stream", chunks: chunks(undefined, model) } : { kind: "json", body: reply(undefined, "STOP", model) });
    switch (script.kind) {
      case "error":
        return googleError(script.status, script.message, script.details, script.headers);
      case "hang":
        return stall(request).then(() => new Response(null));
      case "json":
        return Response.json(sign(structuredClone(script.body)));
      case "stream":
        return stream(request, script, url.searchParams.get("alt") === "sse");
    }
  }

  function embeddings(body: Json, method: string): Response {
    const requests: Json[] = method === "embedContent" ? [body] : body.requests ?? [];
    const vector = (r: Json) => Array.from({ length: r.outputDimensionality ?? 4 }, (_, i) => (JSON.stringify(r.content).length % 7) / 10 + i);
    return Response.json(method === "embedContent" ? { embedding: { values: vector(body) } } : { embeddings: requests.map((r) => ({ values: vector(r) })) });
  }

  function stream(request: Request, script: Extract<GeminiScript, { kind: "stream" }>, sse: boolean): Response {
    const encoder = new TextEncoder();
    const all = script.chunks.map((c) => sign(structuredClone(c)));
    if (!sse) return Response.json(all);
    let i = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (i === script.stallAfter) return stall(request);
        if (i === script.breakAfter) return controller.error(new Error("connection reset"));
        const chunk = all[i++];
        if (!chunk) return controller.close();
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(chunk)}\r\n\r\n`));
      },
      cancel() {
        state.cancelled++;
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }

  return { respond, controls, signatures };
}

export async function startFakeGemini() {
  const { respond, controls, signatures } = geminiResponder();
  /** GET /v1beta/models: these, `pageSize` a page; `calls` counts the pages asked for. */
  const models = { list: [...FAKE_GEMINI_MODELS], pageSize: 2, calls: 0 };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      if (request.headers.get("x-goog-api-key") !== FAKE_GEMINI_KEY) {
        return googleError(400, "API key not valid. Please pass a valid API key.", [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com" }]);
      }
      if (request.method === "GET" && url.pathname === "/v1beta/models") return listModels(url);
      const match = /^\/v1beta\/models\/([^:/]+):(\w+)$/.exec(url.pathname);
      if (!match || request.method !== "POST") return googleError(404, `Not found: ${url.pathname}`);
      return respond(request, decodeURIComponent(match[1]!), match[2]!);
    },
  });

  function listModels(url: URL): Response {
    models.calls++;
    const from = Number(url.searchParams.get("pageToken") ?? 0);
    const size = Math.min(Number(url.searchParams.get("pageSize") ?? 50), models.pageSize);
    const page = models.list.slice(from, from + size).map((id) => ({ name: `models/${id}`, displayName: id, supportedGenerationMethods: ["generateContent", "countTokens"] }));
    return Response.json({ models: page, ...(from + size < models.list.length ? { nextPageToken: String(from + size) } : {}) });
  }

  return {
    url: `http://127.0.0.1:${server.port}`,
    ...controls,
    models,
    signatures,
    /** The next calls answer 429 RESOURCE_EXHAUSTED with Google's RetryInfo. */
    rateLimited: (times = 1) =>
      controls.next(...Array.from({ length: times }, () => ({ kind: "error" as const, status: 429, message: "Resource has been exhausted (e.g. check quota).", details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "7s" }] }))),
    stop: () => server.stop(true),
  };
}

export type FakeGemini = Awaited<ReturnType<typeof startFakeGemini>>;
