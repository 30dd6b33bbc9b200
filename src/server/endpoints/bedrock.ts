import { invokeCodec } from "../../wire/bedrock-invoke/codec.ts";
import { converseCodec } from "../../wire/converse/codec.ts";
import type { Guard } from "../auth.ts";
import { bedrockPrincipal, checkSigned, isSigned, type IngressCredentials } from "../bedrock/auth.ts";
import type { ControlPlane } from "../bedrock/control.ts";
import type { ChatEndpoint, PlainEndpoint, Signature } from "../edge/endpoint.ts";

export interface BedrockOptions {
  guard: Guard;
  credentials?: IngressCredentials;
  /** API_KEY, which a signed request stands for. */
  mainKey?: string;
  control: ControlPlane;
}

const OPERATIONS = ["invoke", "invoke-with-response-stream", "converse", "converse-stream"] as const;

/**
 * Bedrock Runtime as AWS serves it (contract 17), for the AWS SDKs and Claude Code in Bedrock
 * mode: the four chat operations by model id, with Bedrock's error shapes and, for streams, AWS's
 * event-stream frames; and the control plane's model lists on the same base URL. A caller sends a
 * bearer key (AWS_BEARER_TOKEN_BEDROCK) or signs with INGRESS_AWS_CREDENTIALS.
 */
export function bedrock({ guard, credentials, mainKey, control }: BedrockOptions): (ChatEndpoint | PlainEndpoint)[] {
  const signature: Signature = {
    signed: isSigned,
    precheck: (request) => checkSigned(credentials, mainKey, request),
    principal: (request, body, scope, headers) => bedrockPrincipal(guard, credentials, mainKey, request, body, scope, headers),
  };
  const operations = OPERATIONS.map((op): ChatEndpoint => {
    const stream = op.endsWith("stream");
    const converse = op.startsWith("converse");
    return {
      kind: "chat",
      method: "POST",
      path: `/model/:id/${op}`,
      scope: "chat",
      errors: "bedrock",
      framing: "aws-event-stream",
      signature,
      recordAs: `/model/{modelId}/${op}`,
      call(body, request, _query, params = []) {
        const modelId = decoded(params[0] ?? "");
        const codec = converse ? converseCodec(modelId, stream) : invokeCodec(modelId, stream, body);
        return { input: codec, output: codec, headers: request.headers };
      },
      openapi: {
        summary: `Bedrock Runtime ${NAMES[op]}`,
        description: "Bedrock Runtime's operation as AWS serves it, for the AWS SDKs and Claude Code in Bedrock mode: a bearer key, or a SigV4 signature with INGRESS_AWS_CREDENTIALS.",
        tags: ["bedrock"],
        responses: { 200: { description: stream ? "AWS event-stream frames (application/vnd.amazon.eventstream)" : "Bedrock's JSON answer" } },
        requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
      },
    };
  });
  const reads = ["/foundation-models", "/foundation-models/:id", "/inference-profiles", "/inference-profiles/:id"].map((path): PlainEndpoint => ({
    kind: "plain",
    method: "GET",
    path,
    scope: "models",
    errors: "bedrock",
    signature,
    // Asked only by Bedrock's own clients: not in /docs.
    unlisted: true,
    answer: ({ request, query }) => control.answer(pathOf(request.url), new URLSearchParams(query)),
  }));
  return [...operations, ...reads];
}

const NAMES: Record<(typeof OPERATIONS)[number], string> = {
  invoke: "InvokeModel",
  "invoke-with-response-stream": "InvokeModelWithResponseStream",
  converse: "Converse",
  "converse-stream": "ConverseStream",
};

/** The model id from the path; one that is not percent-encoded UTF-8 names no model (Bedrock's answer, not a 405). */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return "\uFFFD";
  }
}

function pathOf(url: string): string {
  const path = new URL(url).pathname;
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}
