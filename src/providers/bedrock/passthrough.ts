import { fromAnthropic } from "../../wire/anthropic/usage.ts";
import { fromConverse } from "../../wire/converse/client.ts";
import { isObject } from "../../lib/read.ts";
import type { Usage } from "../../ir.ts";
import type { NativeCall, NativeReply } from "../provider.ts";
import { fetchError, fetchFailed, parseUpstreamJson, verbatim } from "../../wire/upstream-errors.ts";
import type { BedrockTransport } from "./transport.ts";
import { eventDecoder } from "../../wire/event-stream/read.ts";

/**
 * Bedrock Runtime clients (the AWS SDKs, Claude Code in Bedrock mode) to a Bedrock upstream: the
 * body goes up as the client sent it, re-signed with the upstream's credentials, and the answer
 * comes back as Bedrock sent it, a stream frame by frame. Only a stream's first chunk is read
 * here: Bedrock sends throttling as a stream's first frame, which must be an error that is retried.
 */
export function createPassthrough({ up, post, chunks }: BedrockTransport) {
  // A 4xx about the request keeps Bedrock's own words (`verbatim`), a context overflow's too: the client wrote the body, it acts on them.
  const call = (converse: boolean) => async (native: NativeCall): Promise<NativeReply> => {
    const { model, stream, signal, body } = native;
    const action = converse ? (stream ? "converse-stream" : "converse") : stream ? "invoke-with-response-stream" : "invoke";
    try {
      const response = await post(model, action, body, signal, bedrockHeaders(native.headers));
      if (!stream) {
        const text = await response.text().catch((error) => fetchFailed(up, error, true));
        const usage = (converse ? undefined : headerUsage(response.headers)) ?? bodyUsage(parseUpstreamJson(up, text));
        return { kind: "json", body: text, contentType: response.headers.get("content-type") ?? "application/json", ...(usage ? { usage } : {}) };
      }
      return { kind: "stream", body: checked(chunks(response)), contentType: "application/vnd.amazon.eventstream", failure: (error) => verbatim(fetchError(up, error, true), true) as Error };
    } catch (error) {
      throw verbatim(error, true);
    }
  };

  /** The chunks as they come; the first frame decoded, so that an exception there throws (and is retried). */
  function checked(source: AsyncIterator<Uint8Array, unknown>): AsyncIterator<Uint8Array, unknown> {
    let first = true;
    return {
      async next() {
        const read = await source.next();
        if (!first || read.done) return read;
        first = false;
        // Its first frame only: an upstream's first chunk is often its whole stream.
        const decode = eventDecoder(up);
        const [frame] = decode.frames(read.value);
        if (frame) decode.event(frame);
        return read;
      },
      return: async (reason?: unknown) => (await source.return?.(reason)) ?? { done: true, value: undefined },
    };
  }

  return { invoke: call(false), converse: call(true) };
}

/** The client's `X-Amzn-Bedrock-*` headers (a guardrail, its version, trace, performance config): a passthrough keeps them. */
function bedrockHeaders(headers: Headers | undefined): Record<string, string> | undefined {
  let found: Record<string, string> | undefined;
  for (const [name, value] of headers ?? []) if (name.startsWith("x-amzn-bedrock-")) (found ??= {})[name] = value;
  return found;
}

/** InvokeModel tells its token counts in headers, whatever the family's body; the cache's beside the input. */
function headerUsage(headers: Headers): Usage | undefined {
  const input = headers.get("x-amzn-bedrock-input-token-count");
  const output = headers.get("x-amzn-bedrock-output-token-count");
  if (input === null && output === null) return undefined;
  const cacheRead = Number(headers.get("x-amzn-bedrock-cache-read-input-token-count")) || 0;
  const cacheWrite = Number(headers.get("x-amzn-bedrock-cache-write-input-token-count")) || 0;
  return { input: { total: (Number(input) || 0) + cacheRead + cacheWrite, cacheRead, cacheWrite }, output: Number(output) || 0 };
}

/** Converse's usage, and Claude's (`input_tokens`, the cache counted beside) when InvokeModel's headers are missing. */
function bodyUsage(reply: unknown): Usage | undefined {
  const usage = isObject(reply) && isObject(reply.usage) ? reply.usage : undefined;
  if (!usage) return undefined;
  return usage.inputTokens !== undefined ? fromConverse(usage) : fromAnthropic(usage);
}
