import { isObject, numberOr, topMembers } from "../../lib/read.ts";
import { foundationModel } from "../anthropic-models.ts";
import type { NativeCall, NativeReply } from "../provider.ts";
import { badShape, fetchError, fetchFailed, parseUpstreamJson, verbatim } from "../../wire/upstream-errors.ts";
import { checkMessage, renamed } from "../../wire/anthropic/reply.ts";
import { dropBeta } from "../dropped-betas.ts";
import { bedrockBetas } from "./betas.ts";
import { relay } from "./relay.ts";
import type { BedrockTransport } from "./transport.ts";

/**
 * Anthropic Messages to Claude on Bedrock, same family: the client's body goes up with only the
 * edits InvokeModel needs, and the answer comes back as Bedrock sent it (a stream event by event).
 */

export const BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31";

/**
 * The client's body for InvokeModel: model and stream out (the path says them), version and betas
 * in. From the body the caller parsed already, when it has it. The client's own text is kept where
 * its members can be cut out safely (Claude Code's bodies run to hundreds of KB, and writing one
 * anew cost ~70 µs per 80 KB); otherwise the body is written from the parsed one.
 */
export function invokeBody(call: Pick<NativeCall, "body" | "json" | "headers">, model: string, betasOf: BetasOf, extra: Record<string, unknown> = {}): string {
  const json = call.json ?? (JSON.parse(call.body) as Record<string, unknown>);
  const betas = betasOf(model, call.headers?.get("anthropic-beta"));
  const head = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...(betas.length ? { anthropic_beta: betas } : {}), ...extra };
  const members = clientMembers(call.body, json, head) ?? memberwise(call.body, head);
  if (members !== undefined) return `${JSON.stringify(head).slice(0, -1)}${members ? `,${members}` : ""}}`;
  const { model: _model, stream: _stream, ...rest } = json;
  return JSON.stringify({ ...head, ...rest });
}

/**
 * The client's members, as it wrote them, but `model` and `stream`: when `model` is the body's first
 * member and `stream`, if sent, its last (as the SDKs and Claude Code write them), which is where
 * they are surely the top level's. Undefined otherwise, or when a member of `head` is sent too.
 */
function clientMembers(raw: string, json: Record<string, unknown>, head: Record<string, unknown>): string | undefined {
  if (typeof json.model !== "string" || Object.keys(head).some((key) => Object.hasOwn(json, key))) return undefined;
  const first = FIRST_MODEL.exec(raw);
  const value = JSON.stringify(json.model);
  if (!first || !raw.startsWith(value, first[0].length)) return undefined;
  const valueEnd = first[0].length + value.length;
  const after = MEMBER_END.exec(raw.slice(valueEnd, valueEnd + 64));
  if (!after) return undefined;
  const from = valueEnd + after[0].length;
  // Read from the body's last bytes only: a pattern tried at every position of it would cost what the cut saves.
  const tailAt = Math.max(from, raw.length - 64);
  const last = (Object.hasOwn(json, "stream") ? LAST_STREAM : LAST_BRACE).exec(raw.slice(tailAt));
  if (!last || (Object.hasOwn(json, "stream") && last[1] !== String(json.stream))) return undefined;
  return raw.slice(from, tailAt + last.index).trim();
}

/** The client's members but `model` and `stream`, found by reading the body's structure wherever they are: every other byte kept. */
function memberwise(raw: string, head: Record<string, unknown>): string | undefined {
  const members = topMembers(raw);
  if (!members || members.some((m) => Object.hasOwn(head, m.key))) return undefined;
  return members.filter((m) => m.key !== "model" && m.key !== "stream").map((m) => raw.slice(m.start, m.end)).join(",");
}

/** The betas of a request's header Bedrock takes for the model. */
type BetasOf = (model: string, header: string | null | undefined) => string[];

const FIRST_MODEL = /^\s*\{\s*"model"\s*:\s*/;
const MEMBER_END = /^\s*,\s*/;
const LAST_STREAM = /\s*,\s*"stream"\s*:\s*(true|false)\s*\}\s*$/;
const LAST_BRACE = /\s*\}\s*$/;

/**
 * A 4xx about the request keeps Bedrock's own words (`verbatim`): clients (Claude Code) act on them.
 * A context overflow is the exception: Bedrock's "Input is too long" becomes Anthropic's "prompt is too long".
 */
export function createAnthropicNative(name: string, override: string[] | undefined, { up, post, chunks }: BedrockTransport) {
  // A completion's dropped betas are counted; a count of the same request's tokens drops the same ones again.
  const sent: BetasOf = (model, header) => bedrockBetas(model, header, override, (beta) => dropBeta(name, beta));
  const counted: BetasOf = (model, header) => bedrockBetas(model, header, override);
  async function messages(call: NativeCall): Promise<NativeReply> {
    const { model, requested, stream, signal } = call;
    const body = invokeBody(call, model, sent);
    try {
      if (!stream) {
        const response = await post(model, "invoke", body, signal);
        const text = await response.text().catch((error) => fetchFailed(up, error, true));
        const reply = parseUpstreamJson(up, text);
        const usage = checkMessage(reply, up);
        return { kind: "json", body: renamed(text, reply as Record<string, unknown>, requested), contentType: "application/json", ...(usage ? { usage } : {}) };
      }
      const response = await post(model, "invoke-with-response-stream", body, signal);
      return { kind: "stream", body: relay(up, chunks(response), requested), contentType: "text/event-stream", failure: (error) => verbatim(fetchError(up, error, true), false) as Error };
    } catch (error) {
      throw verbatim(error, false);
    }
  }

  /** Bedrock's CountTokens, on the foundation model (it takes no inference profile). */
  async function countTokens(call: NativeCall): Promise<number> {
    const modelId = foundationModel(call.model);
    const raw = call.json ?? (JSON.parse(call.body) as Record<string, unknown>);
    // InvokeModel's body needs max_tokens; a count does not depend on it.
    const body = invokeBody({ ...call, json: raw }, modelId, counted, raw.max_tokens === undefined ? { max_tokens: 1 } : {});
    const response = await post(modelId, "count-tokens", JSON.stringify({ input: { invokeModel: { body } } }), call.signal).catch((error) => {
      throw verbatim(error, false);
    });
    const reply = parseUpstreamJson(up, await response.text().catch((error) => fetchFailed(up, error, true)));
    const tokens = isObject(reply) ? numberOr(reply.inputTokens) : undefined;
    if (tokens === undefined) throw badShape(up, "no inputTokens in the count", JSON.stringify(reply));
    return tokens;
  }

  return { messages, countTokens };
}
