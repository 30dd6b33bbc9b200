import type { Chat, ChatCall, ChatOutcome } from "../../core/chat.ts";
import { GatewayError, notFound } from "../../errors.ts";
import type { Json } from "../../lib/read.ts";
import type { Logger } from "../../log.ts";
import { ATTR, NOOP_SPAN, startTrace, TELEMETRY_OFF, type Telemetry, type Trace } from "../../telemetry/index.ts";
import type { Codec } from "../../wire/codec.ts";
import type { AccessEntry } from "../access-log.ts";
import { authorize, mayReadNamedFiles, type Guard, type Principal } from "../auth.ts";
import { createFailedKeys } from "../failed-keys.ts";
import { RequestLog } from "../request-log.ts";
import { type BodyTime, bodyTimedOut, counted, declaredTooLong, jsonObject, readText, tooLarge } from "./body.ts";
import type { corsHeaders } from "./cors.ts";
import type { ChatEndpoint, Endpoint, ModelEndpoint, PlainEndpoint, Signature } from "./endpoint.ts";
import { failure, idHeaders, REQUEST_ID, rendererOf } from "./errors.ts";
import { logsItself, wantsProgress, withProgress } from "./progress.ts";
import { reply } from "./reply.ts";
import { createRouter } from "./router.ts";
import { trackUsage } from "./track-usage.ts";

export { REQUEST_ID } from "./errors.ts";

export interface PipelineOptions {
  chat: Chat;
  guard: Guard;
  log: Logger;
  debug: boolean;
  /** The body limit, in bytes. */
  maxBody: number;
  /** How long a body may take to arrive. */
  bodyTime?: BodyTime;
  cors: ReturnType<typeof corsHeaders>;
  /** Where request log entries go; none below LOG_LEVEL=info. */
  accessLog?: (entry: AccessEntry) => void;
  /** OpenTelemetry (contract 24): a SERVER span for each call to a model endpoint. */
  telemetry?: Telemetry;
}

/**
 * The one request pipeline every endpoint is served by, without a framework (a framework's
 * per-request layers cost more than all of parley's own work on a passed-through reply): an id;
 * CORS; the body limit; the endpoint, or 404 / 405; the key (or a vendor's signature) and its
 * scope, rate limit and budget; the body; the endpoint's work, with usage tracked for model calls;
 * one log line; and every failure in the caller's dialect.
 */
export function createPipeline(endpoints: Endpoint[], options: PipelineOptions) {
  const { chat, guard, log: logger, debug, maxBody, bodyTime, cors, accessLog, telemetry = TELEMETRY_OFF } = options;
  const router = createRouter(endpoints);
  const failedKeys = createFailedKeys();

  /** `peer`: the socket's address (or how to ask for it: only a wrong key needs it), when served over a socket (wrong keys are counted by it). */
  async function handle(request: Request, peer?: string | (() => string | undefined)): Promise<Response> {
    const id = requestId(request);
    const headers: Record<string, string> = { [REQUEST_ID]: id };
    const log = accessLog && new RequestLog(accessLog, request.method, request.url, id);
    // Not a proxy: CONNECT's target is a host:port, and the client would wait for a tunnel.
    if (request.method === "CONNECT") return finished(failure(connectRefused(), request, headers, "parley", debug, logger), log);
    const url = request.url;
    const start = url.indexOf("/", url.indexOf("//") + 2);
    const mark = url.indexOf("?", start);
    const sent = mark === -1 ? url.slice(start) : url.slice(start, mark);
    // One trailing slash is ignored, as it always was.
    const found = router.find(request.method, sent.length > 1 && sent.endsWith("/") ? sent.slice(0, -1) : sent);
    // A browser's preflight is answered before anything else, without a log line; never for a declaration without CORS.
    const declared = found?.endpoint ?? (request.method === "OPTIONS" ? router.find(request.headers.get("access-control-request-method") ?? "GET", sent)?.endpoint : undefined);
    const preflight = declared?.cors === false ? undefined : cors(request, headers);
    if (preflight) return preflight;
    const endpoint = found?.endpoint;
    const renderer = endpoint ? (typeof endpoint.errors === "string" ? endpoint.errors : endpoint.errors(request)) : rendererOf(sent, request);
    idHeaders(renderer, id, headers);
    let response: Response;
    try {
      if (declaredTooLong(request, maxBody)) throw tooLarge(maxBody);
      if (!endpoint) throw unrouted(request.method, sent, router.known(sent));
      response = endpoint.kind === "plain"
        ? await plain(endpoint, request, headers, log, found.params, mark === -1 ? "" : url.slice(mark + 1))
        : await traced(endpoint, request, headers, log, found.params, mark === -1 ? "" : url.slice(mark));
    } catch (error) {
      const address = error instanceof GatewayError && error.status === 401 ? (typeof peer === "function" ? peer() : peer) : undefined;
      const throttled = address !== undefined ? failedKeys.failed(address) : undefined;
      response = failure(throttled ?? error, request, headers, renderer, debug, logger);
    }
    if (found?.head) response = await bodiless(response);
    if (logsItself.has(response)) return response;
    return finished(response, log);
  }

  /**
   * The key's principal, checked for the endpoint's scope, rate limit and budget; for a signed request
   * (`raw`: its body, read first, as the signature covers it) the signature's. None on open endpoints.
   */
  function admit(endpoint: Endpoint, request: Request, raw: string | undefined, headers: Record<string, string>): Principal | Promise<Principal> | undefined {
    if (endpoint.scope === undefined) return undefined;
    if (raw !== undefined) return endpoint.signature!.principal(request, raw, endpoint.scope, headers);
    return authorize(guard, request, endpoint.scope, headers, endpoint.key);
  }

  /**
   * A model call in its SERVER span (every model endpoint has one; no other endpoint does), ended
   * with the call's usage (track-usage.ts), or here by a failure before the call was tracked.
   */
  async function traced(endpoint: ModelEndpoint, request: Request, headers: Record<string, string>, log: RequestLog | undefined, params: string[], query: string): Promise<Response> {
    const trace = startTrace(telemetry, request.headers);
    if (trace.span === NOOP_SPAN) return tracked(endpoint, request, headers, log, params, query, trace);
    trace.span.set(ATTR.operation, endpoint.operation ?? (endpoint.kind === "call" ? "embeddings" : "chat"));
    try {
      return await tracked(endpoint, request, headers, log, params, query, trace);
    } catch (error) {
      trace.span.fail(error instanceof GatewayError ? error.type : "_OTHER", error instanceof Error ? error.message : undefined);
      trace.span.end();
      throw error;
    }
  }

  /** A model call: tracked for usage, answered in the endpoint's framing. */
  async function tracked(endpoint: ModelEndpoint, request: Request, headers: Record<string, string>, log: RequestLog | undefined, params: string[], query: string, trace: Trace): Promise<Response> {
    const signed = endpoint.signature?.signed(request) ? await signedBody(endpoint.signature, request, maxBody, bodyTime) : undefined;
    // Most keys are admitted at once: a promise only when a limit or a budget has to be asked.
    const admitted = admit(endpoint, request, signed, headers)!;
    const principal = admitted instanceof Promise ? await admitted : admitted;
    const raw = signed ?? (await readText(request, maxBody, bodyTime));
    const body = jsonObject(raw);
    mayReadNamedFiles(principal, body);
    const name = endpoint.recordAs ?? endpoint.path;
    const access = guard.access?.(principal.key, raw, true);
    const usage = trackUsage(guard.usage, { log, request, principal, access, tpm: guard.tpm, span: trace.span }, name);
    const { observe, onDone, onBreak } = usage.hooks;
    const caller = { endpoint: name, key: principal.label, headers: request.headers };
    if (endpoint.kind === "call") return reply(await endpoint.serve({ body, raw, signal: request.signal, caller, access, observe, onDone, onBreak, trace }, params).then(usage.answered, usage.failed), headers);
    const made = endpoint.call(body, request, query, params, raw);
    const call: ChatCall = { input: made.input, output: made.output, headers: made.headers, body: made.body ?? body, raw: made.raw ?? raw, signal: request.signal, caller, access, observe, onDone, onBreak, trace };
    const { output } = call;
    if (wantsProgress(request, body, output)) return withProgress(chat, call, usage, (outcome) => answer(endpoint, outcome, body, headers, output), headers, log);
    let outcome: ChatOutcome;
    try {
      outcome = await chat(call);
    } catch (error) {
      throw usage.failed(error);
    }
    return answer(endpoint, usage.answered(outcome), body, headers, output);
  }

  /** Any other endpoint: its handler, given what it asked the pipeline to read. */
  async function plain(endpoint: PlainEndpoint, request: Request, headers: Record<string, string>, log: RequestLog | undefined, params: string[], search: string): Promise<Response> {
    let raw = endpoint.signature?.signed(request) ? await signedBody(endpoint.signature, request, maxBody, bodyTime) : undefined;
    const principal = await admit(endpoint, request, raw, headers);
    const query = search === "" ? {} : Object.fromEntries(new URLSearchParams(search));
    if (endpoint.body === "stream") {
      const upload = counted(request, maxBody, bodyTime);
      try {
        return answered(await endpoint.answer({ request: upload.request, headers, principal, query, params }), headers);
      } catch (error) {
        // The handler sees only a failed read: the reason is the limit.
        throw upload.over() ? tooLarge(maxBody) : upload.late() && bodyTime ? bodyTimedOut(bodyTime) : error;
      }
    }
    const body = endpoint.body === "json" ? jsonObject((raw ??= await readText(request, maxBody, bodyTime))) : undefined;
    return answered(await endpoint.answer({ request, headers, principal, query, params, body, raw, log }), headers);
  }

  const routes: { method: string; path: string }[] = endpoints.filter((e) => !e.unlisted).map(({ method, path }) => ({ method, path }));
  return { handle, routes };
}

/** A chat's outcome as its endpoint frames it, with the headers the endpoint adds. */
function answer(endpoint: ChatEndpoint, outcome: ChatOutcome, body: Json, headers: Record<string, string>, output: Codec): Response {
  endpoint.decorate?.(outcome, body, headers);
  return reply(outcome, headers, endpoint.framing, output);
}

/** A handler's value as the answer: its own Response (the answer's headers added where it has none), text, or JSON. */
function answered(value: unknown, headers: Record<string, string>): Response {
  if (value instanceof Response) {
    for (const name in headers) if (!value.headers.has(name)) value.headers.set(name, headers[name]!);
    return value;
  }
  if (typeof value === "string") return new Response(value, { headers });
  return Response.json(value, { headers });
}

/** A signed request's body, read only once its signature's header is found good: never a body before the key. */
function signedBody(signature: Signature, request: Request, maxBody: number, bodyTime: BodyTime | undefined): Promise<string> {
  signature.precheck(request);
  return readText(request, maxBody, bodyTime);
}

function finished(response: Response, log: RequestLog | undefined): Response {
  log?.finish(response.status);
  return response;
}

/** The client's request id (up to 128 characters), else a new one. */
function requestId(request: Request): string {
  return request.headers.get(REQUEST_ID)?.slice(0, 128) || crypto.randomUUID();
}

/** A HEAD answered by a GET endpoint: its status and headers, the body's length, no body. */
async function bodiless(response: Response): Promise<Response> {
  if (response.body === null) return response;
  const length = (await response.arrayBuffer()).byteLength;
  const headers = new Headers(response.headers);
  headers.set("content-length", String(length));
  return new Response(null, { status: response.status, headers });
}

const connectRefused = () => new GatewayError(405, "invalid_request_error", "CONNECT is not supported: parley is not a proxy.", { headers: { connection: "close" } });

function unrouted(method: string, path: string, known: boolean): GatewayError {
  if (known) return new GatewayError(405, "invalid_request_error", `Method ${method} is not allowed on ${path}.`);
  return notFound(`No route ${method} ${path}.`);
}

export type Pipeline = ReturnType<typeof createPipeline>;
