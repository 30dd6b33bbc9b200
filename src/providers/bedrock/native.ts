import type { Config } from "../../config.ts";
import { GatewayError } from "../../errors.ts";
import { isObject, numberOr } from "../../formats/read.ts";
import { foundationModel } from "../anthropic-models.ts";
import type { NativeCall, NativeReply } from "../provider.ts";
import { badShape, fetchError, fetchFailed, parseUpstreamJson, type Upstream } from "../upstream-errors.ts";
import { checkMessage } from "./anthropic.ts";
import { bedrockBetas } from "./betas.ts";
import { latin1Slice, type Span } from "./frames.ts";
import { eventDecoder, parsePayload, type BedrockTransport } from "./transport.ts";

/**
 * Anthropic Messages to Claude on Bedrock, same family: the client's body goes up with only the
 * edits InvokeModel needs, and the answer comes back as Bedrock sent it (a stream event by event).
 */

const BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31";
const encoder = new TextEncoder();

/**
 * The client's body for InvokeModel: model and stream out (the path says them), version and betas
 * in. From the body the caller parsed already, when it has it.
 */
export function invokeBody(call: Pick<NativeCall, "body" | "json" | "headers">, model: string, override: string[] | undefined, extra: Record<string, unknown> = {}): string {
  const { model: _model, stream: _stream, ...rest } = call.json ?? (JSON.parse(call.body) as Record<string, unknown>);
  const betas = bedrockBetas(model, call.headers?.get("anthropic-beta"), override);
  return JSON.stringify({ anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...(betas.length ? { anthropic_beta: betas } : {}), ...extra, ...rest });
}

export function createAnthropicNative(config: Config, { up, post }: BedrockTransport) {
  const override = config.beta.anthropicBetas;
  /** A 4xx about the request keeps Bedrock's own words: clients (Claude Code) act on them. */
  const verbatim = (error: unknown): unknown => {
    if (!(error instanceof GatewayError) || !error.upstream || error.status < 400 || error.status >= 500 || error.status === 429) return error;
    if (error.upstreamStatus === 401 || error.upstreamStatus === 403) return error;
    return new GatewayError(error.status, error.type, error.upstream, { upstream: error.upstream, upstreamStatus: error.upstreamStatus, retryable: error.retryable, headers: error.headers });
  };

  async function messages(call: NativeCall): Promise<NativeReply> {
    const { model, requested, stream, signal } = call;
    const body = invokeBody(call, model, override);
    try {
      if (!stream) {
        const response = await post(model, "invoke", body, signal);
        const text = await response.text().catch((error) => fetchFailed(up, error, true));
        const reply = parseUpstreamJson(up, text);
        const usage = checkMessage(reply, up);
        return { kind: "json", body: renamedReply(text, reply as Record<string, unknown>, requested), contentType: "application/json", ...(usage ? { usage } : {}) };
      }
      const response = await post(model, "invoke-with-response-stream", body, signal);
      return { kind: "stream", body: relay(up, response.body!, requested), contentType: "text/event-stream", failure: (error) => verbatim(fetchError(up, error, true)) as Error };
    } catch (error) {
      throw verbatim(error);
    }
  }

  /** Bedrock's CountTokens, on the foundation model (it takes no inference profile). */
  async function countTokens(call: NativeCall): Promise<number> {
    const modelId = foundationModel(call.model);
    const raw = call.json ?? (JSON.parse(call.body) as Record<string, unknown>);
    // InvokeModel's body needs max_tokens; a count does not depend on it.
    const body = invokeBody({ ...call, json: raw }, modelId, override, raw.max_tokens === undefined ? { max_tokens: 1 } : {});
    const response = await post(modelId, "count-tokens", JSON.stringify({ input: { invokeModel: { body } } }), call.signal).catch((error) => {
      throw verbatim(error);
    });
    const reply = parseUpstreamJson(up, await response.text().catch((error) => fetchFailed(up, error, true)));
    const tokens = isObject(reply) ? numberOr(reply.inputTokens) : undefined;
    if (tokens === undefined) throw badShape(up, "no inputTokens in the count", JSON.stringify(reply));
    return tokens;
  }

  return { messages, countTokens };
}

/**
 * The reply names the model the client asked for; everything else is Bedrock's, byte for byte.
 * Bedrock writes `"model":"…"` among the first keys: that text is replaced in place, and the whole
 * reply is written anew only when the key is not found where it can only be the top level's.
 */
function renamedReply(text: string, reply: Record<string, unknown>, requested: string): string {
  const at = text.indexOf('"model":');
  const before = at > 0 ? text.slice(0, at) : "";
  const value = JSON.stringify(reply.model);
  // Before it only the opening brace and flat keys: no nested object or list.
  if (at > 0 && typeof reply.model === "string" && before.lastIndexOf("{") === 0 && !before.includes("[") && text.startsWith(value, at + 8)) {
    return `${before}"model":${JSON.stringify(requested)}${text.slice(at + 8 + value.length)}`;
  }
  return JSON.stringify({ ...reply, model: requested });
}

/**
 * The stream's events as server-sent events, each chunk's JSON as Bedrock sent it. Read straight
 * from the response body (the stream guard reads this, with no stream between): the frames a chunk
 * completes go out together, as one write.
 */
function relay(up: Upstream, body: ReadableStream<Uint8Array>, requested: string): AsyncIterator<Uint8Array, unknown> {
  const reader = body.getReader();
  const decode = eventDecoder(up);
  // A frame that fails after good ones in the same chunk: they go out first, the error on the next read.
  let failed: { error: unknown } | undefined;
  return {
    async next() {
      if (failed) throw failed.error;
      for (;;) {
        const read = await reader.read();
        if (read.done) {
          decode.end();
          return { done: true, value: undefined };
        }
        let text = "";
        try {
          for (const frame of decode.frames(read.value)) {
            const { type, payload } = decode.event(frame);
            if (type === "chunk") text += sseEvent(up, chunkText(up, payload), requested);
          }
        } catch (error) {
          if (!text) throw error;
          failed = { error };
        }
        if (text) return { done: false, value: encoder.encode(text) };
      }
    },
    async return(reason?: unknown) {
      await reader.cancel(reason);
      return { done: true, value: undefined };
    },
  };
}

/** A chunk's payload is `{"bytes":"<base64 of the model's event>", …}`: the event's text. */
function chunkText(up: Upstream, payload: Span): string {
  const { bytes, start: from, end: to } = payload;
  const start = indexOf.call(bytes, BYTES_KEY, from);
  const end = start < 0 || start >= to ? -1 : indexOf.call(bytes, QUOTE, start + BYTES_KEY.length);
  if (end >= 0 && end < to) return fromBase64(up, latin1Slice.call(bytes, start + BYTES_KEY.length, end));
  const parsed = parsePayload(up, payload);
  if (typeof parsed.bytes !== "string") throw badShape(up, "a chunk without bytes", JSON.stringify(parsed).slice(0, 500));
  return fromBase64(up, parsed.bytes);
}

/**
 * Base64 to text: `atob` gives each byte as a character, which is the text itself when it is all
 * ASCII (a model's events mostly are); otherwise its bytes are read as UTF-8.
 */
function fromBase64(up: Upstream, base64: string): string {
  let binary: string;
  try {
    binary = atob(base64);
  } catch {
    throw badShape(up, "a chunk whose bytes are not base64", base64.slice(0, 500));
  }
  return NOT_ASCII.test(binary) ? Buffer.from(binary, "latin1").toString("utf8") : binary;
}

const NOT_ASCII = /[^\x00-\x7f]/;
const { indexOf } = Buffer.prototype;
const BYTES_KEY = Buffer.from('"bytes":"');
const QUOTE = 34;

/**
 * `event: <its type>` and the event's own text as the data line; message_start names the model
 * asked for. Anthropic writes every event as `{"type":"<name>",…}`: such an event is relayed as
 * it came, its name read from its first bytes, as a passed-through OpenAI stream's events are
 * (parsing each cost more than the rest of the relay). Any other text is parsed to check it: an
 * upstream's garbage never reaches a client as an event, it ends the stream with an error event.
 */
function sseEvent(up: Upstream, text: string, requested: string): string {
  const name = text.startsWith(TYPE_KEY) ? text.slice(TYPE_KEY.length, text.indexOf('"', TYPE_KEY.length)) : "";
  const next = text.charCodeAt(TYPE_KEY.length + name.length + 1);
  if (name !== "message_start" && NAME.test(name) && (next === COMMA || next === BRACE) && text.endsWith("}")) return `event: ${name}\ndata: ${text}\n\n`;
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    throw badShape(up, "a stream event that is not JSON", text.slice(0, 500));
  }
  if (!isObject(event) || typeof event.type !== "string" || !NAME.test(event.type)) throw badShape(up, "a stream event without a type", text.slice(0, 500));
  if (event.type === "message_start" && isObject(event.message)) {
    return `event: message_start\ndata: ${JSON.stringify({ ...event, message: { ...event.message, model: requested } })}\n\n`;
  }
  return `event: ${event.type}\ndata: ${text}\n\n`;
}

const TYPE_KEY = '{"type":"';
const NAME = /^[a-z_]+$/;
const COMMA = 44;
const BRACE = 125;
