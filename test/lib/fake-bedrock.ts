import { EventStreamCodec } from "@smithy/core/event-streams";
import { SignatureV4 } from "@smithy/signature-v4";
import { createHash, createHmac } from "node:crypto";
import { scripted, stall } from "./scripted.ts";

/**
 * A fake Bedrock Runtime on 127.0.0.1 over plain HTTP/1.1: InvokeModel, InvokeModelWithResponseStream,
 * Converse, ConverseStream and CountTokens, with streams sent as real AWS event-stream frames (CRC-checked by
 * the gateway) and errors with Bedrock's own headers. Like AWS, it checks each request's SigV4
 * signature against the secret of the access key it names, and refuses a bad one with 403.
 */

type Json = Record<string, any>;

export type BedrockScript =
  | { kind: "json"; body: Json; headers?: Record<string, string> }
  /** For invoke streams each event is a chunk's JSON; for Converse, `{ eventName: payload }`. */
  | { kind: "stream"; events: Json[]; gapMs?: number; stallAfter?: number; exceptionAfter?: number; exception?: string; corruptAfter?: number; breakAfter?: number; rawChunk?: { at: number; payload: Json } }
  /** Any body at all, as given (`null`, a wrong shape). */
  | { kind: "raw"; body: string }
  | { kind: "error"; status: number; type: string; message: string }
  | { kind: "hang" };

export interface BedrockReceived {
  modelId: string;
  action: "invoke" | "invoke-with-response-stream" | "converse" | "converse-stream" | "count-tokens";
  headers: Headers;
  body: Json;
  /** The body as it came. */
  text: string;
}

const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);
const str = (value: string) => ({ type: "string" as const, value });

export function eventFrame(eventType: string, payload: Json): Uint8Array {
  return codec.encode({
    headers: { ":event-type": str(eventType), ":content-type": str("application/json"), ":message-type": str("event") },
    body: new TextEncoder().encode(JSON.stringify(payload)),
  });
}

export function chunkFrame(chunk: Json): Uint8Array {
  return eventFrame("chunk", { bytes: Buffer.from(JSON.stringify(chunk)).toString("base64") });
}

export function exceptionFrame(type: string, message: string): Uint8Array {
  return codec.encode({
    headers: { ":exception-type": str(type), ":content-type": str("application/json"), ":message-type": str("exception") },
    body: new TextEncoder().encode(JSON.stringify({ message })),
  });
}

/** The secrets of every access key the tests sign with. */
const SECRETS: Record<string, string> = {
  AKIAFAKEFAKEFAKE: "fake-secret-access-key",
  AKIADEFAULTCHAIN: "s1",
  AKIANAMEDPROFILE: "s2",
  AKIASTATICKEYS: "s3",
};

class Sha256 {
  private hash;
  constructor(secret?: unknown) {
    this.hash = secret ? createHmac("sha256", secret as Uint8Array) : createHash("sha256");
  }
  update(data: unknown) {
    this.hash.update(data as Uint8Array);
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
}

/** Bedrock API keys the fake accepts as bearer tokens. */
export const BEDROCK_API_KEYS = new Set(["bedrock-api-key-test-0001"]);

/** One account in one region, as a fake started with its own credentials is: it refuses a signature made for any other. */
export interface FakeAccount {
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * Undefined when the request is signed right (or carries a known Bedrock API key), else AWS's error type for what is wrong.
 * With an account, only its key is known and the signature must be scoped to its region, as AWS's endpoint in that region requires.
 */
async function signatureProblem(request: Request, body: string, account?: FakeAccount): Promise<string | undefined> {
  const bearer = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
  if (bearer !== undefined) return BEDROCK_API_KEYS.has(bearer) ? undefined : "UnrecognizedClientException";
  const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=[0-9a-f]{64}$/.exec(request.headers.get("authorization") ?? "");
  const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(request.headers.get("x-amz-date") ?? "");
  if (!auth || !date) return "MissingAuthenticationTokenException";
  const [, keyId, region, service, signedHeaders] = auth;
  const secretAccessKey = account ? (keyId === account.accessKeyId ? account.secretAccessKey : undefined) : SECRETS[keyId!];
  if (!secretAccessKey) return "UnrecognizedClientException";
  if (account && region !== account.region) return "InvalidSignatureException";
  const claimed = request.headers.get("x-amz-content-sha256");
  if (claimed && claimed !== createHash("sha256").update(body).digest("hex")) return "InvalidSignatureException";
  const url = new URL(request.url);
  const headers = Object.fromEntries(signedHeaders!.split(";").map((name) => [name, request.headers.get(name) ?? ""]));
  const signer = new SignatureV4({ credentials: { accessKeyId: keyId!, secretAccessKey }, region: region!, service: service!, sha256: Sha256, uriEscapePath: true, applyChecksum: false });
  const expected = await signer.sign(
    { method: request.method, protocol: url.protocol, hostname: url.hostname, port: Number(url.port), path: url.pathname, query: Object.fromEntries(url.searchParams), headers, body },
    { signingDate: new Date(`${date[1]}-${date[2]}-${date[3]}T${date[4]}:${date[5]}:${date[6]}Z`) },
  );
  return expected.headers.authorization === request.headers.get("authorization") ? undefined : "InvalidSignatureException";
}

const arn = (id: string) => `arn:aws:bedrock:us-east-1::foundation-model/${id}`;

/** Without an account, any key of SECRETS in any region signs; with one, only its key in its region. */
export async function startFakeBedrock(account?: FakeAccount) {
  const { take, controls } = scripted<BedrockScript, BedrockReceived>();
  const { received, state } = controls;
  /** Runtime calls in flight now and at most since the last reset; each waits `delayMs` before it is answered. */
  const calls = { now: 0, most: 0, delayMs: 0 };
  /** Opt-in: without a script, invoke calls are answered by this (a prompt cache: prompt-cache.ts). */
  const cache: { reply?: (body: Json) => BedrockScript } = {};
  /** Calls refused for their signature (wrong key, secret or region). */
  const refused: string[] = [];
  /** The control plane's answers; `failing` makes every call a 503. */
  const control = {
    failing: false,
    calls: 0,
    foundationModels: [
      { modelId: "anthropic.claude-3-5-haiku-20241022-v1:0", providerName: "Anthropic", inferenceTypesSupported: ["ON_DEMAND"], outputModalities: ["TEXT"] },
      { modelId: "amazon.nova-micro-v1:0", providerName: "Amazon", inferenceTypesSupported: ["ON_DEMAND"], outputModalities: ["TEXT"] },
      { modelId: "anthropic.claude-sonnet-4-5-20250929-v1:0", providerName: "Anthropic", inferenceTypesSupported: ["INFERENCE_PROFILE"], outputModalities: ["TEXT"] },
    ] as Json[],
    profiles: [
      { inferenceProfileId: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", inferenceProfileArn: "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0", status: "ACTIVE", type: "SYSTEM_DEFINED", createdAt: "2025-09-29T00:00:00Z", models: [{ modelArn: arn("anthropic.claude-sonnet-4-5-20250929-v1:0") }] },
      { inferenceProfileId: "us.meta.llama3-3-70b-instruct-v1:0", status: "ACTIVE", type: "SYSTEM_DEFINED", models: [{ modelArn: arn("meta.llama3-3-70b-instruct-v1:0") }] },
    ] as Json[],
    applicationProfiles: {
      "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/claude-team": { type: "APPLICATION", models: [{ modelArn: arn("anthropic.claude-3-5-haiku-20241022-v1:0") }] },
      "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/nova-team": { type: "APPLICATION", models: [{ modelArn: arn("amazon.nova-micro-v1:0") }] },
    } as Record<string, Json>,
    customModels: { "arn:aws:bedrock:us-east-1:123456789012:custom-model/claude-tuned": arn("anthropic.claude-3-haiku-20240307-v1:0") } as Record<string, string>,
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      if (request.method === "GET") return controlPlane(request);
      const match = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream|count-tokens)$/.exec(new URL(request.url).pathname);
      if (!match) return Response.json({ message: "unknown operation" }, { status: 404 });
      const modelId = decodeURIComponent(match[1]!);
      const action = match[2] as BedrockReceived["action"];
      const text = await request.text();
      const problem = await signatureProblem(request, text, account);
      if (problem) {
        refused.push(problem);
        return Response.json({ message: `Signature check failed: ${problem}` }, { status: 403, headers: { "x-amzn-errortype": `${problem}:http://internal.amazon.com/coral/com.amazon.coral.service/` } });
      }
      const body = JSON.parse(text || "{}");
      received.push({ modelId, action, headers: request.headers, body, text });
      calls.now++;
      calls.most = Math.max(calls.most, calls.now);
      try {
        if (calls.delayMs) await Bun.sleep(calls.delayMs);
      } finally {
        calls.now--;
      }
      const script = take() ?? (action.startsWith("invoke") ? cache.reply?.(body) : undefined) ?? defaultScript(modelId, action, body);
      switch (script.kind) {
        case "error":
          return Response.json({ message: script.message }, {
            status: script.status,
            headers: { "x-amzn-errortype": `${script.type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, "x-amzn-requestid": "req-1" },
          });
        case "hang":
          return new Promise<Response>((resolve) => request.signal.addEventListener("abort", () => resolve(new Response(null))));
        case "json":
          return Response.json(script.body, { headers: { "x-amzn-requestid": "req-1", ...script.headers } });
        case "raw":
          return new Response(script.body, { headers: { "content-type": "application/json", "x-amzn-requestid": "req-1" } });
        case "stream":
          return streamResponse(request, action, script);
      }
    },
  });

  /** ListFoundationModels, ListInferenceProfiles (two pages), GetInferenceProfile and GetCustomModel. */
  async function controlPlane(request: Request): Promise<Response> {
    const problem = await signatureProblem(request, "", account);
    if (problem) {
      refused.push(problem);
      return Response.json({ message: `Signature check failed: ${problem}` }, { status: 403, headers: { "x-amzn-errortype": problem } });
    }
    control.calls++;
    if (control.failing) return Response.json({ message: "control plane down" }, { status: 503, headers: { "x-amzn-errortype": "ServiceUnavailableException" } });
    const url = new URL(request.url);
    const path = decodeURIComponent(url.pathname);
    if (path === "/foundation-models") return Response.json({ modelSummaries: control.foundationModels });
    if (path === "/inference-profiles") {
      const half = Math.ceil(control.profiles.length / 2);
      const second = url.searchParams.get("nextToken") === "page/2+=";
      return Response.json({ inferenceProfileSummaries: second ? control.profiles.slice(half) : control.profiles.slice(0, half), ...(second ? {} : { nextToken: "page/2+=" }) });
    }
    const profile = /^\/inference-profiles\/(.+)$/.exec(path)?.[1];
    const found = profile && (control.applicationProfiles[profile] ?? control.profiles.find((p) => p.inferenceProfileId === profile));
    if (found) return Response.json(found);
    const custom = /^\/custom-models\/(.+)$/.exec(path)?.[1];
    if (custom && control.customModels[custom]) return Response.json({ modelArn: custom, baseModelArn: control.customModels[custom] });
    return Response.json({ message: "not found" }, { status: 404, headers: { "x-amzn-errortype": "ResourceNotFoundException" } });
  }

  function streamResponse(request: Request, action: string, script: Extract<BedrockScript, { kind: "stream" }>) {
    const frames = script.events.map((e) => {
      if (action === "invoke-with-response-stream") return chunkFrame(e);
      const [name, payload] = Object.entries(e)[0]!;
      return eventFrame(name, payload);
    });
    if (script.rawChunk) frames.splice(script.rawChunk.at, 0, eventFrame("chunk", script.rawChunk.payload));
    if (script.exceptionAfter !== undefined) frames.splice(script.exceptionAfter, frames.length, exceptionFrame(script.exception ?? "modelStreamErrorException", "The model stream failed."));
    if (script.corruptAfter !== undefined) {
      const frame = frames[script.corruptAfter]!.slice();
      frame[frame.length - 6]! ^= 0xff; // a payload byte: the message CRC no longer matches
      frames.splice(script.corruptAfter, frames.length, frame);
    }
    let i = 0;
    request.signal.addEventListener("abort", () => state.cancelled++);
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (i > 0 && script.gapMs) await Bun.sleep(script.gapMs);
        if (i === script.stallAfter) return stall(request);
        if (script.breakAfter !== undefined && i === script.breakAfter) return controller.error(new Error("connection reset"));
        const frame = frames[i++];
        if (!frame) return controller.close();
        controller.enqueue(frame);
      },
      cancel() {
        state.cancelled++;
      },
    });
    return new Response(stream, { headers: { "content-type": "application/vnd.amazon.eventstream", "x-amzn-bedrock-content-type": "application/json" } });
  }

  return {
    url: `http://127.0.0.1:${server.port}`,
    ...controls,
    control,
    refused,
    calls,
    cache,
    reset() {
      controls.reset();
      refused.length = 0;
      calls.most = 0;
      calls.delayMs = 0;
    },
    stop: () => server.stop(true),
  };
}

export type FakeBedrock = Awaited<ReturnType<typeof startFakeBedrock>>;

// ---- default replies, per model family ----

export const anthropicReply = (content: Json[] = [{ type: "text", text: "Hello from Claude" }], stop = "end_turn") => ({
  id: "msg_bdrk_01", type: "message", role: "assistant", model: "claude", content, stop_reason: stop, stop_sequence: null,
  usage: { input_tokens: 13, output_tokens: 5 },
});

export function anthropicEvents(texts = ["Hello", " from", " Claude"], tool?: { id: string; name: string; json: string[] }): Json[] {
  const events: Json[] = [
    { type: "message_start", message: { id: "msg_bdrk_01", type: "message", role: "assistant", model: "claude", content: [], stop_reason: null, usage: { input_tokens: 13, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    ...texts.map((text) => ({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } })),
    { type: "content_block_stop", index: 0 },
  ];
  if (tool) {
    events.push(
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: tool.id, name: tool.name, input: {} } },
      ...tool.json.map((partial_json) => ({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json } })),
      { type: "content_block_stop", index: 1 },
    );
  }
  events.push(
    { type: "message_delta", delta: { stop_reason: tool ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } },
    { type: "message_stop", "amazon-bedrock-invocationMetrics": { inputTokenCount: 13, outputTokenCount: 5, invocationLatency: 100, firstByteLatency: 50 } },
  );
  return events;
}

export const titanReply = (text = "Hello from Titan", reason = "FINISH") => ({
  inputTextTokenCount: 9, results: [{ tokenCount: 4, outputText: text, completionReason: reason }],
});

export function titanEvents(texts = ["Hello", " from", " Titan"], reason = "FINISH"): Json[] {
  return texts.map((outputText, i) => ({
    outputText, index: 0, totalOutputTextTokenCount: i + 1, completionReason: i === texts.length - 1 ? reason : null, inputTextTokenCount: i === 0 ? 9 : null,
    ...(i === texts.length - 1 ? { "amazon-bedrock-invocationMetrics": { inputTokenCount: 9, outputTokenCount: 4, invocationLatency: 80, firstByteLatency: 40 } } : {}),
  }));
}

export const converseReply = (content: Json[] = [{ text: "Hello from Converse" }], stopReason = "end_turn") => ({
  output: { message: { role: "assistant", content } }, stopReason, usage: { inputTokens: 15, outputTokens: 6, totalTokens: 21 }, metrics: { latencyMs: 10 },
});

export function converseEvents(texts = ["Hello", " from", " Converse"], tool?: { id: string; name: string; json: string[] }): Json[] {
  const events: Json[] = [
    { messageStart: { role: "assistant" } },
    ...texts.map((text) => ({ contentBlockDelta: { contentBlockIndex: 0, delta: { text } } })),
    { contentBlockStop: { contentBlockIndex: 0 } },
  ];
  if (tool) {
    events.push(
      { contentBlockStart: { contentBlockIndex: 1, start: { toolUse: { toolUseId: tool.id, name: tool.name } } } },
      ...tool.json.map((input) => ({ contentBlockDelta: { contentBlockIndex: 1, delta: { toolUse: { input } } } })),
      { contentBlockStop: { contentBlockIndex: 1 } },
    );
  }
  events.push({ messageStop: { stopReason: tool ? "tool_use" : "end_turn" } }, { metadata: { usage: { inputTokens: 15, outputTokens: 6, totalTokens: 21 }, metrics: { latencyMs: 10 } } });
  return events;
}

/** A streamed answer with extended thinking: a thinking block (deltas, then its signature), then text. */
export function thinkingEvents(thinking = ["Let me think", " about it."], texts = ["Hello", " after thinking"]): Json[] {
  return [
    { type: "message_start", message: { id: "msg_bdrk_02", type: "message", role: "assistant", model: "claude-sonnet-4-5-20250929", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
    ...thinking.map((text) => ({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: text } })),
    { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "EqQBCkYIARgCIkD0sig==" } },
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
    ...texts.map((text) => ({ type: "content_block_delta", index: 1, delta: { type: "text_delta", text } })),
    { type: "content_block_stop", index: 1 },
    { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 9 } },
    // Bedrock counts the cache beside the input here too, as message_start's usage does.
    { type: "message_stop", "amazon-bedrock-invocationMetrics": { inputTokenCount: 20, outputTokenCount: 9, invocationLatency: 300, firstByteLatency: 90, cacheReadInputTokenCount: 100, cacheWriteInputTokenCount: 0 } },
  ];
}

/** CountTokens' answer: a count that depends on the body, so a test can tell it was read. */
export const countTokensReply = (body: Json) => ({ inputTokens: 7 + String(body?.input?.invokeModel?.body ?? "").length % 100 });

function defaultScript(modelId: string, action: BedrockReceived["action"], body: Json): BedrockScript {
  if (action === "count-tokens") return { kind: "json", body: countTokensReply(body) };
  if (action === "invoke" && modelId.includes("titan-embed")) return titanEmbedding(modelId, body);
  if (action === "invoke" && modelId.includes("cohere.embed")) return cohereEmbedding(body);
  const titan = modelId.includes("titan-text");
  const stream = action.endsWith("stream");
  if (action.startsWith("converse")) return stream ? { kind: "stream", events: converseEvents() } : { kind: "json", body: converseReply() };
  if (titan) return stream ? { kind: "stream", events: titanEvents() } : { kind: "json", body: titanReply() };
  return stream ? { kind: "stream", events: anthropicEvents() } : { kind: "json", body: anthropicReply() };
}

// ---- embedding models, as InvokeModel takes and answers them ----

/** A deterministic vector for a text: its first number says how long the text was, so a test can tell which text it is. */
export function fakeVector(text: string, dimensions: number, unit = true): number[] {
  const raw = Array.from({ length: dimensions }, (_, i) => (i === 0 ? text.length : ((text.charCodeAt(i % Math.max(1, text.length)) || 1) % 7) + 1));
  if (!unit) return raw;
  const norm = Math.sqrt(raw.reduce((sum, x) => sum + x * x, 0));
  return raw.map((x) => x / norm);
}

const tokensOf = (text: string) => Math.max(1, text.split(/\s+/).filter(Boolean).length);
const validation = (message: string): BedrockScript => ({ kind: "error", status: 400, type: "ValidationException", message });

/** Titan Text Embeddings: `{ inputText, dimensions?, normalize?, embeddingTypes? }` (v2), `{ inputText }` alone (v1). */
function titanEmbedding(modelId: string, body: Json): BedrockScript {
  const v1 = modelId.includes("titan-embed-text-v1");
  const allowed = v1 ? ["inputText"] : ["inputText", "dimensions", "normalize", "embeddingTypes"];
  const extra = Object.keys(body).find((key) => !allowed.includes(key));
  if (extra) return validation(`Malformed input request: extraneous key [${extra}] is not permitted, please reformat your input and try again.`);
  if (typeof body.inputText !== "string" || body.inputText === "") return validation("Malformed input request: expected minLength: 1, actual: 0, please reformat your input and try again.");
  if (body.dimensions !== undefined && ![256, 512, 1024].includes(body.dimensions)) return validation(`Malformed input request: #/dimensions: ${body.dimensions} is not a valid enum value, please reformat your input and try again.`);
  const embedding = fakeVector(body.inputText, v1 ? 1536 : body.dimensions ?? 1024, body.normalize !== false);
  const tokens = tokensOf(body.inputText);
  return { kind: "json", body: { embedding, ...(v1 ? {} : { embeddingsByType: { float: embedding } }), inputTextTokenCount: tokens }, headers: { "x-amzn-bedrock-input-token-count": String(tokens) } };
}

/** Cohere Embed: `{ texts, input_type, truncate?, embedding_types?, output_dimension? }`, at most 96 texts. */
function cohereEmbedding(body: Json): BedrockScript {
  const texts = body.texts;
  if (!Array.isArray(texts) || texts.length === 0 || texts.length > 96) return validation("Malformed input request: #/texts: expected between 1 and 96 texts, please reformat your input and try again.");
  if (!["search_document", "search_query", "classification", "clustering"].includes(body.input_type)) return validation("Malformed input request: #/input_type: required, please reformat your input and try again.");
  const dimensions = body.output_dimension ?? 1024;
  const vectors = texts.map((text: string) => fakeVector(text, dimensions));
  const tokens = texts.reduce((sum: number, text: string) => sum + tokensOf(text), 0);
  const embeddings = Array.isArray(body.embedding_types) ? { float: vectors } : vectors;
  return {
    kind: "json",
    body: { id: "emb-fake-1", texts, embeddings, response_type: Array.isArray(body.embedding_types) ? "embeddings_by_type" : "embeddings_floats" },
    headers: { "x-amzn-bedrock-input-token-count": String(tokens) },
  };
}
