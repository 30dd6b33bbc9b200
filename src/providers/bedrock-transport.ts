import { EventStreamCodec, getChunkedStream } from "@smithy/core/event-streams";
import { credentialProvider, type Credentials } from "../aws.ts";
import type { Config } from "../config.ts";
import { GatewayError } from "../errors.ts";
import { createSigner } from "./sigv4.ts";
import { fetchFailed, fromUpstreamStatus, parseUpstreamJson, readUpstreamJson, unreachable } from "./upstream-errors.ts";

const NAME = "AWS Bedrock";

export type Action = "invoke" | "invoke-with-response-stream" | "converse" | "converse-stream";

/** One event of a Bedrock response stream: its `:event-type` and its JSON payload. */
export interface BedrockEvent {
  type: string;
  body: Record<string, unknown>;
}

/**
 * Bedrock Runtime calls as signed fetches: the SDK client's per-call middleware stack cost more
 * than the rest of a converted request, and loading it ~28 MB of memory. Credentials still come
 * from the SDK's provider chain when no static keys are set.
 */
export function createBedrockTransport(beta: Config["beta"], timeout: number) {
  const sign = createSigner(beta.region!, "bedrock");
  const provide = credentialProvider(beta);
  const base = bedrockEndpoint(beta);
  const prefix = base.pathname.replace(/\/$/, "");
  let credentials: Credentials | undefined;

  return async function post(modelId: string, action: Action, body: string, signal: AbortSignal): Promise<Response> {
    if (!credentials || expiresSoon(credentials)) credentials = await provide().catch(credentialsMissing);
    const path = `${prefix}/model/${encodeURIComponent(modelId)}/${action}`;
    const accept = action.endsWith("stream") ? "application/vnd.amazon.eventstream" : "application/json";
    const headers = sign(base.host, path, accept, body, credentials);
    // Bun's idle timeout for the socket: closes a call the gateway gave up on (see firstByte in chat.ts).
    const response = await fetch(base.origin + path, { method: "POST", headers, body, signal, timeout }).catch(rethrow);
    if (!response.ok) throw await httpError(response);
    return response;
  };
}

/** BETA_ENDPOINT_URL, else the region's public endpoint; other partitions' can be given as the former. */
export function bedrockEndpoint({ region, endpointUrl }: Pick<Config["beta"], "region" | "endpointUrl">): URL {
  if (endpointUrl) return new URL(endpointUrl);
  const suffix = region!.startsWith("cn-") ? "amazonaws.com.cn" : region!.startsWith("eusc-") ? "amazonaws.eu" : "amazonaws.com";
  return new URL(`https://bedrock-runtime.${region}.${suffix}`);
}

/** Credentials from SSO, a role or IMDS expire; asking the SDK's provider again refreshes them. */
const expiresSoon = (credentials: Credentials) => credentials.expiration !== undefined && credentials.expiration.getTime() - Date.now() < 5 * 60_000;

export type BedrockTransport = ReturnType<typeof createBedrockTransport>;

const codec = new EventStreamCodec((bytes) => new TextDecoder().decode(bytes), (text) => new TextEncoder().encode(text));
const utf8 = new TextDecoder();

/** The frames of a Bedrock event stream, decoded and checksummed; an exception frame throws. */
export async function* events(response: Response): AsyncGenerator<BedrockEvent> {
  try {
    for await (const frame of getChunkedStream(response.body as unknown as AsyncIterable<Uint8Array>)) {
      const { headers, body } = codec.decode(frame);
      const kind = headers[":message-type"]?.value;
      const payload = parseJson(utf8.decode(body)) as Record<string, unknown>;
      if (kind === "event") yield { type: String(headers[":event-type"]?.value), body: payload };
      else if (kind === "exception") throw awsError(String(headers[":exception-type"]?.value), undefined, String(payload.message ?? "The model stream failed."));
      else throw awsError(String(headers[":error-code"]?.value), undefined, String(headers[":error-message"]?.value ?? "The model stream failed."));
    }
  } catch (error) {
    rethrow(error);
  }
}

/** A whole JSON reply's body. */
export const replyJson = (response: Response) => readUpstreamJson(NAME, response);

export const parseJson = (text: string) => parseUpstreamJson(NAME, text);

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

/** AWS names errors in `x-amzn-ErrorType` (HTTP) or `:exception-type` (stream, camelCase). */
function awsError(name: string, status: number | undefined, message: string, retryAfter?: string | null): GatewayError {
  const known = STATUS_BY_NAME[name.charAt(0).toUpperCase() + name.slice(1)];
  return fromUpstreamStatus(NAME, known ?? status ?? 503, message, retryAfter);
}

async function httpError(response: Response): Promise<GatewayError> {
  const text = await response.text().catch(() => "");
  let body: { message?: string; Message?: string; __type?: string } = {};
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the text itself is the message
  }
  // "ValidationException:http://internal..." or "com.amazon.bedrock#ValidationException"
  const name = (response.headers.get("x-amzn-errortype") ?? body.__type ?? "").split(":")[0]!.split("#").at(-1)!;
  return awsError(name, response.status, body.message ?? body.Message ?? text.slice(0, 500), response.headers.get("retry-after"));
}

function credentialsMissing(error: unknown): never {
  const e = error as { name?: string; message?: string };
  if (e?.name === "CredentialsProviderError") {
    throw new GatewayError(503, "service_unavailable_error", "AWS Bedrock is not configured: set BETA_ACCESS_KEY_ID and BETA_SECRET_ACCESS_KEY, or BETA_PROFILE.", { upstream: e.message });
  }
  throw unreachable(NAME, e?.message ?? String(error));
}

const rethrow = (error: unknown) => fetchFailed(NAME, error);
