import type { Chat, ChatCall, ChatOutcome, EndpointCall } from "../core/chat.ts";
import type { Codec } from "../wire/codec.ts";
import type { ErrorDialect } from "../errors.ts";
import type { Json } from "../lib/read.ts";
import type { Logger } from "../log.ts";
import { trackUsage } from "./track-usage.ts";
import type { AccessEntry } from "./access-log.ts";
import { authorize, type Guard } from "./auth.ts";
import { jsonObject, readText } from "./body.ts";
import type { corsHeaders } from "./cors.ts";
import { failure, REQUEST_ID, requestId } from "./edge.ts";
import { PROGRESS_HEADER, progressAnswer } from "./progress.ts";
import { reply } from "./reply.ts";
import { RequestLog } from "./request-log.ts";

/** An endpoint that routes a model: what its request asks `chat()` for (or how it answers), and what its answer adds. */
export interface ChatEndpoint {
  path: string;
  /** Whose error envelope its callers expect. */
  dialect: ErrorDialect;
  /** Its OpenAPI operation, for /docs. */
  openapi: Record<string, unknown>;
  /** The call for a parsed body; `query` is the URL's query string with its `?` ("" when none). */
  call?(body: Json, request: Request, query: string): Pick<ChatCall, "input" | "output" | "headers">;
  /** An endpoint that is not a chat (embeddings) answers its calls itself. */
  serve?(call: EndpointCall): Promise<ChatOutcome>;
  /** Headers the answer adds once the call is answered. */
  decorate?(outcome: ChatOutcome, body: Json, headers: Record<string, string>): void;
}

export interface ChatEdgeOptions {
  chat: Chat;
  guard: Guard;
  log: Logger;
  debug: boolean;
  /** The body limit, in bytes. */
  maxBody: number;
  cors: ReturnType<typeof corsHeaders>;
  /** Where request log entries go; none below LOG_LEVEL=info. */
  accessLog?: (entry: AccessEntry) => void;
}

/**
 * The chat endpoints, served without a framework: they are what a gateway mostly serves, and
 * Elysia's per-request layers cost more than all of parley's own work on a passed-through reply
 * (bench). Each request still gets what edge.ts gives an Elysia route: an id, CORS, the body
 * limit, the key check, one log line, and errors in its caller's dialect. Returns undefined for a
 * request that is not for a chat endpoint.
 */
export function chatEdge(endpoints: ChatEndpoint[], options: ChatEdgeOptions) {
  const { chat, guard, log: logger, debug, maxBody, cors, accessLog } = options;
  const byPath = new Map(endpoints.map((endpoint) => [endpoint.path, endpoint]));

  async function serve(endpoint: ChatEndpoint, request: Request, query: string): Promise<Response> {
    const id = requestId(request);
    const headers: Record<string, string> = { [REQUEST_ID]: id };
    // Anthropic's clients quote `request-id`.
    if (endpoint.dialect === "anthropic") headers["request-id"] = id;
    cors(request, headers);
    const log = accessLog && new RequestLog(accessLog, request.method, request.url, id);
    try {
      const principal = await authorize(guard, request, "chat", headers);
      const raw = await readText(request, maxBody);
      const body = jsonObject(raw);
      const usage = trackUsage(guard.usage, { log, request, principal }, endpoint.path);
      const caller = { endpoint: endpoint.path, key: principal.label, headers: request.headers };
      const call = { body, raw, signal: request.signal, caller, ...usage.hooks };
      const respond = (outcome: ChatOutcome) => {
        endpoint.decorate?.(outcome, body, headers);
        const response = reply(outcome, headers);
        log?.finish(response.status);
        return response;
      };
      if (endpoint.serve) return respond(await endpoint.serve(call).then(usage.answered, usage.failed));
      const chatCall: ChatCall = { ...endpoint.call!(body, request, query), ...call };
      if (wantsProgress(request, body, chatCall.output)) return await withProgress(chat, chatCall, usage, respond, headers, log);
      return respond(await chat(chatCall).then(usage.answered, usage.failed));
    } catch (error) {
      const response = failure(error, request, headers, endpoint.dialect, { debug, log: logger });
      log?.finish(response.status);
      return response;
    }
  }

  return {
    paths: [...byPath.keys()],
    handle(request: Request): Promise<Response> | undefined {
      if (request.method !== "POST") return undefined;
      const url = request.url;
      const start = url.indexOf("/", url.indexOf("//") + 2);
      const mark = url.indexOf("?", start);
      let path = mark === -1 ? url.slice(start) : url.slice(start, mark);
      if (path.length > 1 && path.endsWith("/")) path = path.slice(0, -1);
      const endpoint = byPath.get(path);
      return endpoint && serve(endpoint, request, mark === -1 ? "" : url.slice(mark));
    },
  };
}

/** Progress is for a streamed OpenAI chat whose client asked for it (see progress.ts). */
const wantsProgress = (request: Request, body: Json, output: Codec) =>
  output.dialect === "openai-chat" && (body as { stream?: unknown }).stream === true && request.headers.get(PROGRESS_HEADER) === "1";

/**
 * The chat for a progress client: answered as always unless a retry comes first; then the
 * response starts at once and the retries, the reply or the last error follow in it.
 */
function withProgress(
  chat: Chat,
  call: ChatCall,
  usage: ReturnType<typeof trackUsage>,
  respond: (outcome: ChatOutcome) => Response,
  headers: Record<string, string>,
  log: RequestLog | undefined,
): Promise<Response> {
  const early = Promise.withResolvers<Response>();
  let progress: ReturnType<typeof progressAnswer> | undefined;
  const work = chat({
    ...call,
    onRetry(retry) {
      if (!progress) {
        progress = progressAnswer(work, headers);
        early.resolve(progress.response());
      }
      progress.retry(retry);
    },
  }).then(usage.answered, usage.failed);
  // An early answer's log line is written when the request is over, with how it ended and where it went.
  const normal = work.then(
    (outcome) => {
      if (!progress) return respond(outcome);
      log?.finish(200);
      return early.promise;
    },
    (error) => {
      if (!progress) throw error;
      log?.finish(typeof (error as { status?: unknown }).status === "number" ? (error as { status: number }).status : 500);
      return early.promise;
    },
  );
  return Promise.race([early.promise, normal]);
}

export type ChatEdge = ReturnType<typeof chatEdge>;
