import type { StreamEvent } from "../../ir.ts";
import { sseData } from "../../lib/sse.ts";
import { decodeReply } from "../../wire/anthropic/reply.ts";
import { encodeRequest } from "../../wire/anthropic/encode-request.ts";
import { streamDecoder } from "../../wire/anthropic/stream.ts";
import { settingName, type Upstream as Declared } from "../kind.ts";
import type { Provider } from "../provider.ts";
import { fetchFailed, parseUpstreamJson, streamedBody, type Upstream } from "../../wire/upstream-errors.ts";
import { anthropicError, streamError } from "../../wire/anthropic/errors.ts";
import { headersOf, labelOf, type AnthropicSettings } from "./settings.ts";
import { createNative } from "./native.ts";

/**
 * The Anthropic API. An Anthropic client's body goes up as sent (native.ts); every other client's
 * request through the IR, written by the one Anthropic wire module Claude on Bedrock uses too.
 */
export function createAnthropicProvider(upstream: Declared<AnthropicSettings>): Provider {
  const base = upstream.settings.baseUrl;
  const up: Upstream = { label: labelOf(upstream), url: base, credentials: settingName(upstream, "api_key") };
  const timeout = upstream.timeoutMs;
  const headers = headersOf(upstream);
  const post = async (body: string, signal: AbortSignal) => {
    const response = await (upstream.fetch ?? fetch)(`${base}/v1/messages`, { method: "POST", body, headers, signal, timeout }).catch((error) => fetchFailed(up, error));
    if (!response.ok) throw anthropicError(up, response.status, await response.text().catch(() => ""), response.headers.get("retry-after"), false);
    return response;
  };
  const native = createNative(upstream, up);

  return {
    name: upstream.name,
    label: up.label,

    async complete(request, model, signal) {
      const response = await post(JSON.stringify({ model, ...encodeRequest(request, up.label, true) }), signal);
      return decodeReply(parseUpstreamJson(up, await response.text().catch((error) => fetchFailed(up, error, true))), up, request);
    },

    async *stream(request, model, signal): AsyncGenerator<StreamEvent> {
      const response = await post(JSON.stringify({ model, ...encodeRequest(request, up.label, true), stream: true }), signal);
      const decode = streamDecoder(up, request);
      let started = false;
      try {
        for await (const ready of sseData(streamedBody(up, response, timeout), up.label)) {
          for (const data of ready) {
            const event = parseUpstreamJson(up, data);
            // An overload sent as the first event, after a 200: nothing has reached the client, another upstream may answer.
            if (!started && (event as { type?: unknown } | null)?.type === "error") throw streamError(up, event, false);
            started = true;
            yield* decode(event);
          }
        }
      } catch (error) {
        fetchFailed(up, error, true);
      }
    },

    native: { "anthropic-messages": native.messages },
    // Any model: a changed id (an alias, a route's `model`) is written into the client's body.
    takesNative: (dialect) => dialect === "anthropic-messages",
    countTokens: { "anthropic-messages": native.countTokens },
  };
}
