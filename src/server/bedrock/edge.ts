import { GatewayError } from "../../errors.ts";
import { invokeCodec } from "../../wire/bedrock-invoke/codec.ts";
import { converseCodec } from "../../wire/converse/codec.ts";
import { trackUsage } from "../track-usage.ts";
import { jsonObject, readText } from "../body.ts";
import { REQUEST_ID, requestId } from "../edge.ts";
import type { ChatEdgeOptions } from "../chat-edge.ts";
import { eventStream, reply } from "../reply.ts";
import { RequestLog } from "../request-log.ts";
import { bedrockPrincipal, isSigned, type IngressCredentials } from "./auth.ts";
import type { ControlPlane } from "./control.ts";
import { bedrockErrorResponse } from "./errors.ts";

export interface BedrockEdgeOptions extends ChatEdgeOptions {
  credentials?: IngressCredentials;
  /** API_KEY, which a signed request stands for. */
  mainKey?: string;
  control: ControlPlane;
}

const OPERATIONS = ["invoke", "invoke-with-response-stream", "converse", "converse-stream"] as const;
type Operation = (typeof OPERATIONS)[number];
const RUNTIME = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream)$/;

/** The paths as /docs and the 405 check know them. */
export const BEDROCK_PATHS = OPERATIONS.map((op) => `/model/:id/${op}`);

/**
 * Bedrock Runtime as AWS serves it (contract 17), for the AWS SDKs and Claude Code in Bedrock
 * mode: the four chat operations by model id, and the control plane's model lists on the same
 * base URL. Served beside the chat edge, without a framework, with what every chat endpoint gets
 * (an id, CORS, the body limit, the key check, usage, one log line) and Bedrock's error shapes.
 * Returns undefined for any other request.
 */
export function bedrockEdge(options: BedrockEdgeOptions) {
  const { chat, guard, log: logger, debug, maxBody, cors, accessLog, credentials, mainKey, control } = options;

  /** One request: its id and CORS headers, its log line, and any error in Bedrock's shape. */
  async function answer(request: Request, work: (headers: Record<string, string>, log: RequestLog | undefined) => Promise<Response>): Promise<Response> {
    const id = requestId(request);
    const headers: Record<string, string> = { [REQUEST_ID]: id, "x-amzn-requestid": id };
    cors(request, headers);
    const log = accessLog && new RequestLog(accessLog, request.method, request.url, id);
    let response: Response;
    try {
      response = await work(headers, log);
    } catch (error) {
      response = failure(error, request, headers);
    }
    log?.finish(response.status);
    return response;
  }

  const serve = (request: Request, modelId: string, op: Operation) =>
    answer(request, async (headers, log) => {
      // A signature covers the body: it is read first. A bearer key is checked before the body is read.
      const raw = isSigned(request) ? await readText(request, maxBody) : undefined;
      const principal = await bedrockPrincipal(guard, credentials, mainKey, request, raw ?? "", "chat", headers);
      const text = raw ?? (await readText(request, maxBody));
      const body = jsonObject(text);
      const stream = op.endsWith("stream");
      const codec = op.startsWith("converse") ? converseCodec(modelId, stream) : invokeCodec(modelId, stream, body);
      const endpoint = `/model/{modelId}/${op}`;
      const usage = trackUsage(guard.usage, { log, request, principal }, endpoint);
      const caller = { endpoint, key: principal.label, headers: request.headers };
      const outcome = await chat({ input: codec, output: codec, body, raw: text, signal: request.signal, headers: request.headers, caller, ...usage.hooks })
        .then(usage.answered, usage.failed);
      return reply(outcome.kind === "events" ? { kind: "stream", body: eventStream(outcome.events, codec.writeEvents!), contentType: EVENT_STREAM, headers: outcome.headers } : outcome, headers);
    });

  const read = (request: Request, path: string) =>
    answer(request, async (headers) => {
      await bedrockPrincipal(guard, credentials, mainKey, request, "", "models", headers);
      return Response.json(control.answer(path, new URL(request.url).searchParams), { headers });
    });

  function failure(error: unknown, request: Request, headers: Record<string, string>): Response {
    if (request.signal.aborted) return new Response(null, { status: 499, headers });
    if (error instanceof GatewayError) return bedrockErrorResponse(error, headers, debug);
    logger.error(`request ${headers[REQUEST_ID]} failed:`, error);
    return bedrockErrorResponse(new GatewayError(500, "internal_server_error", `Internal error; quote request id ${headers[REQUEST_ID]} when reporting it.`), headers, debug);
  }

  return {
    handle(request: Request): Promise<Response> | undefined {
      const url = request.url;
      const start = url.indexOf("/", url.indexOf("//") + 2);
      const mark = url.indexOf("?", start);
      const path = mark === -1 ? url.slice(start) : url.slice(start, mark);
      if (request.method === "POST" && path.startsWith("/model/")) {
        const match = RUNTIME.exec(path);
        if (!match) return undefined;
        let modelId: string;
        try {
          modelId = decodeURIComponent(match[1]!);
        } catch {
          // Not percent-encoded UTF-8: no model has such an id. Bedrock's answer, not a 405.
          modelId = "\uFFFD";
        }
        return serve(request, modelId, match[2] as Operation);
      }
      if (request.method === "GET" && control.serves(path)) return read(request, path);
      return undefined;
    },
  };
}

const EVENT_STREAM = "application/vnd.amazon.eventstream";

