import type { StreamDecoder } from "../../wire/codec.ts";
import type { ChatReply, ChatRequest, StreamEvent } from "../../ir.ts";
import type { Upstream as Declared } from "../kind.ts";
import type { Provider } from "../provider.ts";
import type { BedrockSettings } from "./settings.ts";
import { parseUpstreamJson, type Upstream } from "../../wire/upstream-errors.ts";
import { decodeReply as decodeClaude } from "../../wire/anthropic/reply.ts";
import { encodeRequest as encodeClaude } from "../../wire/anthropic/encode-request.ts";
import { streamDecoder as claudeStream } from "../../wire/anthropic/stream.ts";
import { createBedrockControl } from "./control.ts";
import { createBedrockEmbeddings } from "./embeddings.ts";
import { converseStreamDecoder, decodeConverse, encodeConverse } from "../../wire/converse/converse.ts";
import * as titanReply from "../../wire/titan/reply.ts";
import * as titanRequest from "../../wire/titan/request.ts";
import * as titanStream from "../../wire/titan/stream.ts";
import { BEDROCK_ANTHROPIC_VERSION, createAnthropicNative } from "./native.ts";
import { createBedrockTransport } from "./transport.ts";
// Bedrock's own clients (AWS SDKs, Claude Code in Bedrock mode): their bodies as sent.
import { createPassthrough } from "./passthrough.ts";

/** Which wire body a Bedrock model id takes: Anthropic and Titan natively, the rest through Converse. */
type Family = "anthropic" | "titan" | "converse";

export function family(modelId: string): Family {
  if (/(^|[./])anthropic\./.test(modelId)) return "anthropic";
  if (/(^|[./])amazon\.titan-text-/.test(modelId)) return "titan";
  return "converse";
}

/** ARNs whose id says nothing of the model: the control plane tells which foundation model they run. */
const OPAQUE_ARN = /^arn:aws[\w-]*:bedrock:[^:]*:\d*:(application-inference-profile|custom-model)\//;

/**
 * Claude models Bedrock refuses any `cache_control` for (400 "…did not allow prompt caching"): no
 * breakpoints are added for them (contract 22). The Claude 3 line, and 3.5 Sonnet (its caching never left preview).
 */
const UNCACHED_CLAUDE = /anthropic\.claude-(v2|instant|3-(opus|sonnet|haiku)-|3-5-sonnet-)/;

interface InvokeBody {
  encode: (request: ChatRequest, modelId: string) => unknown;
  decode: (body: unknown, up: Upstream, request: ChatRequest) => ChatReply;
  decoder: (up: Upstream, request: ChatRequest) => StreamDecoder<unknown>;
}

const INVOKE: Record<"anthropic" | "titan", InvokeBody> = {
  anthropic: {
    encode: (request, modelId) => {
      const cacheable = !request.autoCache || !UNCACHED_CLAUDE.test(modelId) ? request : { ...request, autoCache: false };
      return { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...encodeClaude(cacheable, "AWS Bedrock") };
    },
    decode: decodeClaude,
    decoder: claudeStream,
  },
  titan: { encode: titanRequest.encodeRequest, decode: titanReply.decodeReply, decoder: titanStream.streamDecoder },
};

export function createBedrockProvider(upstream: Declared<BedrockSettings>): Provider {
  const transport = createBedrockTransport(upstream);
  const { up, post, events, json } = transport;
  const anthropicNative = createAnthropicNative(upstream.name, upstream.settings.anthropicBetas, transport);
  const passthrough = createPassthrough(transport);
  const control = createBedrockControl(upstream);
  const families = new Map<string, Family>();

  /** The family, asking the control plane once per opaque ARN; Converse, which runs every family, when it cannot say. */
  async function familyOf(modelId: string): Promise<Family> {
    if (!OPAQUE_ARN.test(modelId)) return family(modelId);
    let known = families.get(modelId);
    if (known) return known;
    const base = await control.baseModel(modelId).catch(() => undefined);
    known = base ? family(base) : "converse";
    if (base) families.set(modelId, known);
    return known;
  }

  return {
    name: upstream.name,
    label: up.label,

    async complete(request, modelId, signal) {
      const kind = await familyOf(modelId);
      if (kind === "converse") {
        const response = await post(modelId, "converse", JSON.stringify(encodeConverse(request)), signal);
        return decodeConverse(await json(response), up);
      }
      const response = await post(modelId, "invoke", JSON.stringify(INVOKE[kind].encode(request, modelId)), signal);
      return INVOKE[kind].decode(await json(response), up, request);
    },

    async *stream(request, modelId, signal): AsyncGenerator<StreamEvent> {
      const kind = await familyOf(modelId);
      if (kind === "converse") {
        const response = await post(modelId, "converse-stream", JSON.stringify(encodeConverse(request)), signal);
        const decode = converseStreamDecoder(up);
        for await (const event of events(response)) yield* decode({ [event.type]: event.body });
        return;
      }
      const response = await post(modelId, "invoke-with-response-stream", JSON.stringify(INVOKE[kind].encode(request, modelId)), signal);
      const decode = INVOKE[kind].decoder(up, request);
      for await (const event of events(response)) {
        // Each chunk carries the model's own JSON event, base64-encoded.
        if (event.type === "chunk" && typeof event.body.bytes === "string") yield* decode(parseUpstreamJson(up, Buffer.from(event.body.bytes, "base64").toString()));
      }
    },

    embed: createBedrockEmbeddings(transport),

    native: { "anthropic-messages": anthropicNative.messages, "bedrock-invoke": passthrough.invoke, "bedrock-converse": passthrough.converse },
    // The model goes in the path: any Claude id (an alias, a profile from Anthropic's names) takes the client's body.
    // An opaque ARN is known to be Claude once the control plane has said so (its first call goes through the IR).
    // Bedrock's own clients' bodies go to any model id.
    takesNative: (dialect, modelId) => dialect === "bedrock-invoke" || dialect === "bedrock-converse" || (dialect === "anthropic-messages" && (families.get(modelId) ?? family(modelId)) === "anthropic"),
    countTokens: { "anthropic-messages": anthropicNative.countTokens },
  };
}
