import { fetchFailed, readUpstreamJson, streamedBody, type Upstream } from "../../wire/upstream-errors.ts";
import type { Upstream as Declared } from "../kind.ts";
import { bedrockAuth } from "./auth.ts";
import { credentialsOf, labelOf, type BedrockSettings } from "./settings.ts";
import { httpError } from "../../wire/aws-errors.ts";
import { events } from "../../wire/event-stream/read.ts";

export type Action = "invoke" | "invoke-with-response-stream" | "converse" | "converse-stream" | "count-tokens";

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
