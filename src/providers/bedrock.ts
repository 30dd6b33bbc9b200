import type { Config } from "../config.ts";
import * as anthropic from "../formats/anthropic-messages.ts";
import type { StreamDecoder } from "../formats/codec.ts";
import * as titan from "../formats/titan-text.ts";
import type { ChatRequest, StreamEvent } from "../ir.ts";
import { converseStreamDecoder, decodeConverse, encodeConverse } from "./bedrock-converse.ts";
import { createBedrockTransport, events, parseJson, replyJson } from "./bedrock-transport.ts";
import type { Provider } from "./provider.ts";

/** Which wire body a Bedrock model id takes: Anthropic and Titan natively, the rest through Converse. */
type Family = "anthropic" | "titan" | "converse";

export function family(modelId: string): Family {
  if (/(^|[./])anthropic\./.test(modelId)) return "anthropic";
  if (/(^|[./])amazon\.titan-text-/.test(modelId)) return "titan";
  return "converse";
}

const INVOKE: Record<"anthropic" | "titan", {
  encode: (request: ChatRequest) => unknown;
  decode: (body: never) => ReturnType<typeof anthropic.decodeReply>;
  decoder: () => StreamDecoder<never>;
}> = {
  anthropic: { encode: anthropic.encodeRequest, decode: anthropic.decodeReply, decoder: anthropic.streamDecoder },
  titan: { encode: titan.encodeRequest, decode: titan.decodeReply, decoder: titan.streamDecoder },
};

export function createBedrockProvider(config: Config): Provider {
  const post = createBedrockTransport(config.beta, config.upstreamTimeoutMs);

  return {
    async complete(request, modelId, signal) {
      const kind = family(modelId);
      if (kind === "converse") {
        const response = await post(modelId, "converse", JSON.stringify(encodeConverse(request)), signal);
        return decodeConverse(await replyJson(response) as never);
      }
      const response = await post(modelId, "invoke", JSON.stringify(INVOKE[kind].encode(request)), signal);
      return INVOKE[kind].decode(await replyJson(response) as never);
    },

    async *stream(request, modelId, signal): AsyncGenerator<StreamEvent> {
      const kind = family(modelId);
      if (kind === "converse") {
        const response = await post(modelId, "converse-stream", JSON.stringify(encodeConverse(request)), signal);
        const decode = converseStreamDecoder();
        for await (const event of events(response)) yield* decode({ [event.type]: event.body });
        return;
      }
      const response = await post(modelId, "invoke-with-response-stream", JSON.stringify(INVOKE[kind].encode(request)), signal);
      const decode = INVOKE[kind].decoder();
      for await (const event of events(response)) {
        // Each chunk carries the model's own JSON event, base64-encoded.
        if (event.type === "chunk" && typeof event.body.bytes === "string") yield* decode(parseJson(Buffer.from(event.body.bytes, "base64").toString()) as never);
      }
    },
  };
}
