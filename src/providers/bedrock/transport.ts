import type { GatewayError } from "../../errors.ts";
import { isObject } from "../../lib/read.ts";
import { badShape, fetchFailed, fromUpstreamStatus, parseUpstreamJson, readUpstreamJson, streamedBody, type Upstream } from "../../wire/upstream-errors.ts";
import type { Upstream as Declared } from "../kind.ts";
import { bedrockAuth } from "./auth.ts";
import { credentialsOf, labelOf, type BedrockSettings } from "./kind.ts";
import { utf8Slice } from "../../lib/bytes.ts";
import { decodeFrame, frameSplitter, type Span } from "../../wire/event-stream/frames.ts";
import { awsException } from "../../wire/aws-errors.ts";

export type Action = "invoke" | "invoke-with-response-stream" | "converse" | "converse-stream" | "count-tokens";

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
export function createBedrockTransport(upstream: Declared<BedrockSettings>) {
  const beta = upstream.settings;
  const timeout = upstream.timeoutMs;
  const extra = Object.keys(upstream.headers).length ? upstream.headers : undefined;
  const base = bedrockEndpoint(beta);
  const prefix = base.pathname.replace(/\/$/, "");
  const up: Upstream = { label: labelOf(upstream), url: base.origin, credentials: credentialsOf(upstream) };
  const auth = bedrockAuth(beta, up);

  /** `more`: the client's own Bedrock headers on a passthrough (guardrail, trace, latency), sent beside the signature. */
  const post = async function post(modelId: string, action: Action, body: string, signal: AbortSignal, more?: Record<string, string>): Promise<Response> {
    const path = `${prefix}/model/${encodeURIComponent(modelId)}/${action}`;
    const accept = action.endsWith("stream") ? "application/vnd.amazon.eventstream" : "application/json";
    const signed = await auth.post(base.host, path, accept, body);
    const headers = extra || more ? { ...extra, ...more, ...signed } : signed;
    // Bun's idle timeout for the socket: closes a call the gateway gave up on (see firstByte in chat.ts).
    const response = await (upstream.fetch ?? fetch)(base.origin + path, { method: "POST", headers, body, signal, timeout }).catch((error) => fetchFailed(up, error));
    if (!response.ok) throw await httpError(up, response);
    return response;
  };
  const chunks = (response: Response) => streamedBody(up, response, timeout);
  return { up, post, chunks, events: (response: Response) => events(up, chunks(response)), json: (response: Response) => readUpstreamJson(up, response) };
}

/** The upstream's endpoint_url (BETA_ENDPOINT_URL), else the region's public endpoint; other partitions' can be given as the former. */
export function bedrockEndpoint({ region, endpointUrl }: Pick<BedrockSettings, "region" | "endpointUrl">): URL {
  if (endpointUrl) return new URL(endpointUrl);
  const suffix = region!.startsWith("cn-") ? "amazonaws.com.cn" : region!.startsWith("eusc-") ? "amazonaws.eu" : "amazonaws.com";
  return new URL(`https://bedrock-runtime.${region}.${suffix}`);
}

export type BedrockTransport = ReturnType<typeof createBedrockTransport>;

/** The frames of a Bedrock event stream, decoded and checksummed; an exception frame throws. */
async function* events(up: Upstream, chunks: AsyncIterable<Uint8Array>): AsyncGenerator<BedrockEvent> {
  const decode = eventDecoder(up);
  try {
    for await (const chunk of chunks) {
      for (const frame of decode.frames(chunk)) {
        const { type, payload } = decode.event(frame);
        yield { type, body: parsePayload(up, payload) };
      }
    }
    decode.end();
  } catch (error) {
    fetchFailed(up, error, true);
  }
}

/** An event's JSON payload, which must be an object. */
export function parsePayload(up: Upstream, payload: Span): Record<string, unknown> {
  const text = utf8Slice.call(payload.bytes, payload.start, payload.end);
  const body = parseUpstreamJson(up, text);
  if (!isObject(body)) throw badShape(up, "an event whose payload is not an object", text);
  return body;
}

/**
 * Bedrock's event stream read as its chunks come: `frames` gives the frames a chunk completed,
 * `event` each one's type and payload as bytes (a caller that hands the payload on need not parse
 * it). An exception or error frame throws the error it names.
 */
export function eventDecoder(up: Upstream) {
  const split = frameSplitter(up);
  return {
    frames: split.push,
    event(frame: Span): { type: string; payload: Span } {
      const { headers, payload: body } = decodeCheckedFrame(up, frame);
      const kind = headers[":message-type"];
      if (kind === "event") return { type: String(headers[":event-type"]), payload: body };
      const payload = parsePayload(up, body);
      if (kind === "exception") throw awsError(up, String(headers[":exception-type"]), undefined, String(payload.message ?? "The model stream failed."));
      throw awsError(up, String(headers[":error-code"]), undefined, headers[":error-message"] ?? "The model stream failed.");
    },
    end: split.end,
  };
}

function decodeCheckedFrame(up: Upstream, frame: Span) {
  try {
    return decodeFrame(frame);
  } catch (error) {
    throw badShape(up, `a broken event-stream frame (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** AWS names errors in `x-amzn-ErrorType` (HTTP) or `:exception-type` (stream). */
function awsError(up: Upstream, name: string, status: number | undefined, message: string, retryAfter?: string | null): GatewayError {
  const known = awsException(name);
  return fromUpstreamStatus(up, known?.status ?? status ?? 503, message, retryAfter, known?.retryable);
}

export async function httpError(up: Upstream, response: Response): Promise<GatewayError> {
  const text = await response.text().catch(() => "");
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text);
    if (isObject(parsed)) body = parsed;
  } catch {
    // not JSON: the text itself is the message
  }
  const name = response.headers.get("x-amzn-errortype") ?? String(body.__type ?? "");
  const message = body.message ?? body.Message;
  return awsError(up, name, response.status, typeof message === "string" ? message : text.slice(0, 500), response.headers.get("retry-after"));
}
