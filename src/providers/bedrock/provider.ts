import type { Config } from "../../config.ts";
import type { StreamDecoder } from "../../formats/codec.ts";
import type { ChatReply, ChatRequest, StreamEvent } from "../../ir.ts";
import type { Provider } from "../provider.ts";
import { parseUpstreamJson, type Upstream } from "../upstream-errors.ts";
import * as anthropic from "./anthropic.ts";
import { converseStreamDecoder, decodeConverse, encodeConverse } from "./converse.ts";
import * as titan from "./titan.ts";
import { createAnthropicNative } from "./native.ts";
import { createBedrockTransport } from "./transport.ts";

/** Which wire body a Bedrock model id takes: Anthropic and Titan natively, the rest through Converse. */
type Family = "anthropic" | "titan" | "converse";

export function family(modelId: string): Family {
  if (/(^|[./])anthropic\./.test(modelId)) return "anthropic";
  if (/(^|[./])amazon\.titan-text-/.test(modelId)) return "titan";
  return "converse";
}

interface InvokeBody {
  encode: (request: ChatRequest) => unknown;
  decode: (body: unknown, up: Upstream, request: ChatRequest) => ChatReply;
  decoder: (up: Upstream, request: ChatRequest) => StreamDecoder<unknown>;
}

const INVOKE: Record<"anthropic" | "titan", InvokeBody> = {
  anthropic: { encode: anthropic.encodeRequest, decode: anthropic.decodeReply, decoder: anthropic.streamDecoder },
  titan: { encode: titan.encodeRequest, decode: titan.decodeReply, decoder: titan.streamDecoder },
};

export function createBedrockProvider(config: Config): Provider {
  const transport = createBedrockTransport(config.beta, config.upstreamTimeoutMs);
  const { up, post, events, json } = transport;
  const anthropicNative = createAnthropicNative(config, transport);

  return {
    name: "beta",
    label: up.label,

    async complete(request, modelId, signal) {
      const kind = family(modelId);
      if (kind === "converse") {
        const response = await post(modelId, "converse", JSON.stringify(encodeConverse(request)), signal);
        return decodeConverse(await json(response), up);
      }
      const response = await post(modelId, "invoke", JSON.stringify(INVOKE[kind].encode(request)), signal);
      return INVOKE[kind].decode(await json(response), up, request);
    },

    async *stream(request, modelId, signal): AsyncGenerator<StreamEvent> {
      const kind = family(modelId);
      if (kind === "converse") {
        const response = await post(modelId, "converse-stream", JSON.stringify(encodeConverse(request)), signal);
        const decode = converseStreamDecoder(up);
        for await (const event of events(response)) yield* decode({ [event.type]: event.body });
        return;
      }
      const response = await post(modelId, "invoke-with-response-stream", JSON.stringify(INVOKE[kind].encode(request)), signal);
      const decode = INVOKE[kind].decoder(up, request);
      for await (const event of events(response)) {
        // Each chunk carries the model's own JSON event, base64-encoded.
        if (event.type === "chunk" && typeof event.body.bytes === "string") yield* decode(parseUpstreamJson(up, Buffer.from(event.body.bytes, "base64").toString()));
      }
    },

    native: { "anthropic-messages": anthropicNative.messages },
    // The model goes in the path: any Claude id (an alias, a profile from Anthropic's names) takes the client's body.
    takesNative: (dialect, modelId) => dialect === "anthropic-messages" && family(modelId) === "anthropic",
    countTokens: { "anthropic-messages": anthropicNative.countTokens },
  };
}
