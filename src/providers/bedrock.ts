import {
  BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, InvokeModelCommand, InvokeModelWithResponseStreamCommand,
  type BedrockRuntimeClientConfig,
} from "@aws-sdk/client-bedrock-runtime";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { awsCredentials } from "../aws.ts";
import type { Config } from "../config.ts";
import { GatewayError } from "../errors.ts";
import * as anthropic from "../formats/anthropic-messages.ts";
import type { StreamDecoder } from "../formats/codec.ts";
import * as titan from "../formats/titan-text.ts";
import type { ChatRequest, StreamEvent } from "../ir.ts";
import { converseStreamDecoder, decodeConverse, encodeConverse } from "./bedrock-converse.ts";
import type { Provider } from "./provider.ts";
import { fromUpstreamStatus, unreachable } from "./upstream-errors.ts";

const NAME = "AWS Bedrock";

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
  const client = new BedrockRuntimeClient(clientConfig(config));
  const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

  return {
    async complete(request, modelId, signal) {
      const kind = family(modelId);
      if (kind === "converse") {
        const out = await client.send(new ConverseCommand(encodeConverse(request, modelId) as never), { abortSignal: signal }).catch(rethrow);
        return decodeConverse(out as never);
      }
      const command = new InvokeModelCommand({ modelId, body: json(INVOKE[kind].encode(request)), contentType: "application/json", accept: "application/json" });
      const out = await client.send(command, { abortSignal: signal }).catch(rethrow);
      return INVOKE[kind].decode(parseJson(out.body) as never);
    },

    async *stream(request, modelId, signal): AsyncGenerator<StreamEvent> {
      const kind = family(modelId);
      if (kind === "converse") {
        const out = await client.send(new ConverseStreamCommand(encodeConverse(request, modelId) as never), { abortSignal: signal }).catch(rethrow);
        const decode = converseStreamDecoder();
        try {
          for await (const event of out.stream ?? []) yield* decode(event as never);
        } catch (error) {
          rethrow(error);
        }
        return;
      }
      const command = new InvokeModelWithResponseStreamCommand({ modelId, body: json(INVOKE[kind].encode(request)), contentType: "application/json", accept: "application/json" });
      const out = await client.send(command, { abortSignal: signal }).catch(rethrow);
      const decode = INVOKE[kind].decoder();
      try {
        for await (const event of out.body ?? []) {
          if (event.chunk?.bytes) yield* decode(parseJson(event.chunk.bytes) as never);
        }
      } catch (error) {
        rethrow(error);
      }
    },
  };
}

function clientConfig(config: Config): BedrockRuntimeClientConfig {
  const { region, endpointUrl } = config.beta;
  return {
    region,
    maxAttempts: 1,
    // The SDK's default HTTP/2 handler cannot talk to a plain HTTP/1.1 endpoint.
    ...(endpointUrl ? { endpoint: endpointUrl, requestHandler: new NodeHttpHandler() } : {}),
    ...awsCredentials(config.beta),
  };
}

function parseJson(bytes: Uint8Array | undefined): unknown {
  const text = new TextDecoder().decode(bytes);
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError(503, "service_unavailable_error", "AWS Bedrock sent a reply that is not JSON.", { upstream: text.slice(0, 500) });
  }
}

const STATUS_BY_NAME: Record<string, number> = {
  ThrottlingException: 429,
  ServiceQuotaExceededException: 429,
  ModelTimeoutException: 504,
  ValidationException: 400,
  ResourceNotFoundException: 404,
  AccessDeniedException: 403,
  UnrecognizedClientException: 403,
  ExpiredTokenException: 403,
  InvalidSignatureException: 403,
  ModelStreamErrorException: 503,
  InternalServerException: 503,
  ServiceUnavailableException: 503,
  ModelNotReadyException: 503,
  ModelErrorException: 503,
};

function rethrow(error: unknown): never {
  if (error instanceof GatewayError) throw error;
  const e = error as { name?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number }; $response?: { headers?: Record<string, string> } };
  if (e?.name === "AbortError") throw error;
  if (e?.name === "CredentialsProviderError") {
    throw new GatewayError(503, "service_unavailable_error", "AWS Bedrock is not configured: set BETA_ACCESS_KEY_ID and BETA_SECRET_ACCESS_KEY, or BETA_PROFILE.", { upstream: e.message });
  }
  const status = STATUS_BY_NAME[e?.name ?? ""] ?? e?.$metadata?.httpStatusCode;
  if (status) throw fromUpstreamStatus(NAME, status, e.message ?? String(e.name), e.$response?.headers?.["retry-after"]);
  throw unreachable(NAME, e?.message ?? String(error));
}
