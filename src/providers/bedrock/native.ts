import type { Config } from "../../config.ts";
import { GatewayError } from "../../errors.ts";
import { isObject, numberOr } from "../../formats/read.ts";
import { foundationModel } from "../anthropic-models.ts";
import type { NativeCall, NativeReply } from "../provider.ts";
import { badShape, fetchError, fetchFailed, parseUpstreamJson } from "../upstream-errors.ts";
import { decodeReply } from "./anthropic.ts";
import { bedrockBetas } from "./betas.ts";
import type { BedrockTransport } from "./transport.ts";

/**
 * Anthropic Messages to Claude on Bedrock, same family: the client's body goes up with only the
 * edits InvokeModel needs, and the answer comes back as Bedrock sent it (a stream event by event).
 */

const BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31";
const encoder = new TextEncoder();

/** The client's body for InvokeModel: model and stream out (the path says them), version and betas in. */
export function invokeBody(raw: string, model: string, call: Pick<NativeCall, "headers">, override: string[] | undefined, extra: Record<string, unknown> = {}): string {
  const { model: _model, stream: _stream, ...rest } = JSON.parse(raw) as Record<string, unknown>;
  const betas = bedrockBetas(model, call.headers?.get("anthropic-beta"), override);
  return JSON.stringify({ anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...(betas.length ? { anthropic_beta: betas } : {}), ...extra, ...rest });
}

export function createAnthropicNative(config: Config, { up, post, events }: BedrockTransport) {
  const override = config.beta.anthropicBetas;
  /** A 4xx about the request keeps Bedrock's own words: clients (Claude Code) act on them. */
  const verbatim = (error: unknown): unknown => {
    if (!(error instanceof GatewayError) || !error.upstream || error.status < 400 || error.status >= 500 || error.status === 429) return error;
    if (error.upstreamStatus === 401 || error.upstreamStatus === 403) return error;
    return new GatewayError(error.status, error.type, error.upstream, { upstream: error.upstream, upstreamStatus: error.upstreamStatus, retryable: error.retryable, headers: error.headers });
  };

  async function messages(call: NativeCall): Promise<NativeReply> {
    const { model, requested, stream, signal } = call;
    const body = invokeBody(call.body, model, call, override);
    try {
      if (!stream) {
        const response = await post(model, "invoke", body, signal);
        const reply = parseUpstreamJson(up, await response.text().catch((error) => fetchFailed(up, error, true)));
        const { usage } = decodeReply(reply, up);
        // The reply names the model the client asked for; everything else is Bedrock's.
        const bytes = encoder.encode(JSON.stringify({ ...(reply as object), model: requested })).buffer as ArrayBuffer;
        return { kind: "json", bytes, contentType: "application/json", ...(usage ? { usage } : {}) };
      }
      const response = await post(model, "invoke-with-response-stream", body, signal);
      return { kind: "stream", body: relay(events(response), requested), contentType: "text/event-stream", failure: (error) => verbatim(fetchError(up, error, true)) as Error };
    } catch (error) {
      throw verbatim(error);
    }
  }

  /** Bedrock's CountTokens, on the foundation model (it takes no inference profile). */
  async function countTokens(call: NativeCall): Promise<number> {
    const modelId = foundationModel(call.model);
    const raw = JSON.parse(call.body) as Record<string, unknown>;
    // InvokeModel's body needs max_tokens; a count does not depend on it.
    const body = invokeBody(call.body, modelId, call, override, raw.max_tokens === undefined ? { max_tokens: 1 } : {});
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

const TYPE = /^\{\s*"type"\s*:\s*"([a-z_]+)"/;

/**
 * Each chunk's JSON, as Bedrock sent it, as one server-sent event. The `event:` line and the data
 * go out as two writes so the stream guard, which looks at the last two writes, sees `message_stop`.
 */
function relay(source: AsyncGenerator<{ type: string; body: Record<string, unknown> }>, requested: string): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next = await source.next();
        if (next.done) return controller.close();
        const { type, body } = next.value;
        if (type !== "chunk" || typeof body.bytes !== "string") continue;
        let data = Buffer.from(body.bytes, "base64").toString();
        const name = TYPE.exec(data)?.[1] ?? eventType(data);
        if (name === "message_start") data = renamed(data, requested);
        controller.enqueue(encoder.encode(`event: ${name}\n`));
        controller.enqueue(encoder.encode(`data: ${data}\n\n`));
        return;
      }
    },
    cancel: async () => {
      await source.return(undefined);
    },
  }, { highWaterMark: 0 });
}

function eventType(data: string): string {
  try {
    const event = JSON.parse(data);
    if (isObject(event) && typeof event.type === "string" && /^[a-z_]+$/.test(event.type)) return event.type;
  } catch {}
  return "unknown";
}

/** message_start names the model the client asked for. */
function renamed(data: string, requested: string): string {
  try {
    const event = JSON.parse(data);
    if (isObject(event) && isObject(event.message)) return JSON.stringify({ ...event, message: { ...event.message, model: requested } });
  } catch {}
  return data;
}
