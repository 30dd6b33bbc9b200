import type { Config } from "../../config.ts";
import { GatewayError } from "../../errors.ts";
import { isObject, numberOr } from "../../formats/read.ts";
import { foundationModel } from "../anthropic-models.ts";
import type { NativeCall, NativeReply } from "../provider.ts";
import { badShape, fetchError, fetchFailed, parseUpstreamJson } from "../upstream-errors.ts";
import { checkMessage } from "./anthropic.ts";
import { bedrockBetas } from "./betas.ts";
import { relay } from "./relay.ts";
import type { BedrockTransport } from "./transport.ts";

/**
 * Anthropic Messages to Claude on Bedrock, same family: the client's body goes up with only the
 * edits InvokeModel needs, and the answer comes back as Bedrock sent it (a stream event by event).
 */

const BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31";

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
