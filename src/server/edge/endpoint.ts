import type { Scope } from "../../config.ts";
import type { ChatCall, ChatOutcome, EndpointCall } from "../../core/chat.ts";
import type { Json } from "../../lib/read.ts";
import type { Principal } from "../auth.ts";
import type { Renderer } from "./errors.ts";
import type { RequestLog } from "../request-log.ts";

/**
 * One endpoint, declared as data: where it is, who may call it, what of the request it reads, whose
 * errors its callers expect, how its answer is framed, and what /docs says of it. The pipeline
 * (pipeline.ts) does every per-request step for all of them; a declaration says only what differs.
 */
export type Endpoint = ModelEndpoint | PlainEndpoint;

/** An endpoint whose calls go to a model: tracked for usage, traced (contract 24), and always behind a key. */
export type ModelEndpoint = ChatEndpoint | CallEndpoint;

/** `gen_ai.operation.name` of a model endpoint's spans. */
export type Operation = "chat" | "embeddings" | "text_completion";

interface Declared {
  method: "GET" | "POST" | "PATCH" | "DELETE" | "HEAD";
  /** Literal segments, `:name` for one segment (percent-decoded), a last `*` for the rest (as sent). */
  path: string;
  /** The scope a key needs (several: any of them); absent: open to all. */
  scope?: Scope | readonly Scope[];
  /** false: no CORS headers and no preflight (the admin API: the dashboard is served from the same origin). */
  cors?: false;
  /** Whose error envelope its callers expect: fixed, or read from the request (GET /v1/models and `anthropic-version`). */
  errors: Renderer | ((request: Request) => Renderer);
  /** Its OpenAPI operation; absent: not in /docs. */
  openapi?: Record<string, unknown>;
  /**
   * Not listed (in /docs, `app.routes` and the 405 check): for calls only a vendor's own clients make
   * (Bedrock's control plane), and /docs' own pages.
   */
  unlisted?: boolean;
  /** Where its callers put their key, when not only in `Authorization: Bearer` or `x-api-key` (Gemini's `x-goog-api-key`, `?key=`). */
  key?: (request: Request) => string | undefined;
  /** A caller that signs its request with its vendor's scheme instead of sending a key (SigV4). */
  signature?: Signature;
}

/** An endpoint that routes a model through `chat()`: the pipeline reads its JSON body, tracks usage and frames the answer. */
export interface ChatEndpoint extends Declared {
  kind: "chat";
  scope: Scope;
  /** How a stream of our own events is written: server-sent events, or AWS's event stream (the output codec's `writeEvents`). */
  framing: "sse" | "aws-event-stream";
  /** The name usage records, metrics and routes' `when` know it by (default: the path). */
  recordAs?: string;
  /** Its spans' operation (default `chat`). */
  operation?: Operation;
  /**
   * The codecs (and headers) for a parsed body; `query` is the URL's query string with its `?` ("" when
   * none), `params` the path's `:name` parts as sent (none when asked outside a request: `routes explain`).
   * It may give the body the core reads instead of the one sent (Vertex's, which names its model in the URL).
   */
  call(body: Json, request: Request, query: string, params?: string[], raw?: string): Pick<ChatCall, "input" | "output" | "headers"> & Partial<Pick<ChatCall, "body" | "raw">>;
  /** Headers the answer adds once the call is answered. */
  decorate?(outcome: ChatOutcome, body: Json, headers: Record<string, string>): void;
}

/** An endpoint that is not a chat (embeddings) but is tracked as one: it answers its call itself. */
export interface CallEndpoint extends Declared {
  kind: "call";
  scope: Scope;
  recordAs?: string;
  /** Its spans' operation (default `embeddings`). */
  operation?: Operation;
  /** `params`: the path's `:name` parts as sent (Gemini's model). */
  serve(call: EndpointCall, params: string[]): Promise<ChatOutcome>;
}

/** Everything else: a handler given what the pipeline read, answering a JSON value or a Response. */
export interface PlainEndpoint extends Declared {
  kind: "plain";
  /** What the pipeline reads first: nothing, the body as a JSON object, or the request's body left as a stream (uploads; the limit still holds). */
  body?: "none" | "json" | "stream";
  answer(context: Context): unknown;
}

export interface Context {
  request: Request;
  /** The answer's headers so far (id, CORS, rate limit): a handler may add to them. */
  headers: Record<string, string>;
  /** Absent on open endpoints. */
  principal?: Principal;
  /** The query string's parameters (the last of a repeated one). */
  query: Record<string, string>;
  /** The path's `:name` and `*` parts, in order. */
  params: string[];
  /** With `body: "json"`. */
  body?: Json;
  raw?: string;
  /** The request's log line (absent below LOG_LEVEL=info): a handler that calls upstreams notes where it went. */
  log?: RequestLog;
}

export interface Signature {
  /** Whether this request is signed (else it must carry a key). */
  signed(request: Request): boolean;
  /** Checks a signed request's header (key id, scope, date) before its body is read; throws to refuse it. */
  precheck(request: Request): void;
  /** The principal a signed request stands for: the body is read first, as the signature covers it. */
  principal(request: Request, body: string, scope: Scope | readonly Scope[], headers: Record<string, string>): Principal | Promise<Principal>;
}
