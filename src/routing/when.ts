import { closest } from "../lib/did-you-mean.ts";
import type { ChatRequest } from "../ir.ts";
import { estimateLoaded } from "./estimate.ts";
import { isTable, typeError, unknownKey } from "./file-values.ts";
import { matcher } from "../lib/glob.ts";
import type { KeyType } from "../providers/kind.ts";

/** A route's `when` (contract 15): every condition given must hold. */
export interface When {
  input_tokens_over?: number;
  thinking?: boolean;
  tools?: boolean;
  images?: boolean;
  stream?: boolean;
  /** A glob on the endpoint's path. */
  endpoint?: string;
  /** A glob on the API key's label. */
  key?: string;
  /** Header name (lower case) -> a glob on its value; an absent header fails. */
  header?: Record<string, string>;
}

export const WHEN: Record<keyof When, KeyType> = {
  input_tokens_over: "integer", thinking: "boolean", tools: "boolean", images: "boolean", stream: "boolean",
  endpoint: "string", key: "string", header: "table",
};

/** The endpoints whose requests are routed by model; Bedrock's are named as usage records name them. */
export const ENDPOINTS = [
  "/v1/chat/completions", "/v1/messages", "/v1/responses", "/v1/completions", "/v1/embeddings",
  ...["invoke", "invoke-with-response-stream", "converse", "converse-stream"].map((op) => `/model/{modelId}/${op}`),
];

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A checked `when`; `fail(key, message)` names the key's line. Empty: undefined (always). */
export function readWhen(raw: unknown, fail: (key: string | undefined, message: string) => never): When | undefined {
  if (!isTable(raw)) return fail(undefined, "when must be a table: when = { thinking = true }, or [routes.when]");
  for (const [key, value] of Object.entries(raw)) {
    if (!Object.hasOwn(WHEN, key)) fail(key, unknownKey(key, Object.keys(WHEN), "in when"));
    const wrong = typeError(value, WHEN[key as keyof When]);
    if (wrong) fail(key, `${key} in when must be ${wrong}`);
  }
  const when = raw as When;
  const endpoint = when.endpoint;
  if (endpoint !== undefined && !endpoint.includes("*") && !ENDPOINTS.includes(endpoint)) {
    const near = closest(endpoint, ENDPOINTS);
    fail("endpoint", `endpoint '${endpoint}' in when is not an endpoint that routes by model${near ? ` (did you mean '${near}'?)` : ""}; they are ${ENDPOINTS.join(", ")}`);
  }
  const header = when.header && Object.fromEntries(Object.entries(when.header).map(([name, value]) => {
    if (!TOKEN.test(name)) fail(name, `'${name}' in when.header is not a header name`);
    return [name.toLowerCase(), value as string];
  }));
  const checked = { ...when, ...(header ? { header } : {}) };
  return Object.keys(checked).length ? checked : undefined;
}

/** What a route's `when` reads of one request: the decoded request, and who sent it where. */
export interface Facts {
  /**
   * The request in the IR: a chat's is a getter that decodes it the first time a condition reads it
   * (stream, tools, thinking, images, input_tokens_over), so a passthrough whose routes ask none is
   * never decoded. Absent for embeddings: no stream, tools, thinking or images, and no tokens counted.
   */
  readonly request?: ChatRequest;
  /** The endpoint's path: `/v1/messages`, … */
  endpoint?: string;
  /** The API key's label. */
  key?: string;
  headers?: Headers;
  /** Counted the first time a route asks (`input_tokens_over`), then kept for the next. */
  tokens?: number;
  images?: boolean;
  /** The headers routes read, read once each: by slot (`slotOf`), null when absent. */
  seen?: (string | null)[];
  /** stream, tools and thinking as bits, read once. */
  flags?: number;
  /** The session it belongs to (contract 22), read once by `sessionOf`: null when it names none. */
  session?: string | null;
  /** The body's `prompt_cache_key`, for a request that has a body. */
  promptCacheKey?(): string | undefined;
}

/** One condition of a `when`, as `parley routes explain` shows it. */
export interface Condition {
  /** As the file writes it: `thinking = true`, `header.user-agent = "claude-cli/*"`. */
  says: string;
  holds(facts: Facts): boolean;
  /** What the request has, for `parley routes explain`. */
  has(facts: Facts): string;
}

const STREAM = 1;
const TOOLS = 2;
const THINKING = 4;

/**
 * A `when` as one test, for the router: the request's flags compared at once as bits, each header
 * read once per request however many routes ask, strings compared without a RegExp where the glob
 * allows, the token count last. Ten routes cost a few hundred ns a request this way, several times
 * less than calling each of `conditions` in turn (scripts/bench/routes.ts); a test checks that both agree.
 */
export function compile(when: When): (facts: Facts) => boolean {
  let mask = 0;
  let want = 0;
  const bit = (value: boolean | undefined, b: number) => {
    if (value === undefined) return;
    mask |= b;
    if (value) want |= b;
  };
  bit(when.stream, STREAM);
  bit(when.tools, TOOLS);
  bit(when.thinking, THINKING);
  const endpoint = when.endpoint === undefined ? undefined : matcher(when.endpoint);
  const key = when.key === undefined ? undefined : matcher(when.key);
  const headers = Object.entries(when.header ?? {}).map(([name, pattern]) => ({ name, slot: slotOf(name), test: matcher(pattern) }));
  const { images, input_tokens_over: over } = when;
  return (facts) => {
    if (mask !== 0 && (flagsOf(facts) & mask) !== want) return false;
    if (endpoint && (facts.endpoint === undefined || !endpoint(facts.endpoint))) return false;
    if (key && (facts.key === undefined || !key(facts.key))) return false;
    for (const h of headers) {
      const value = header(facts, h.name, h.slot);
      if (value === null || !h.test(value)) return false;
    }
    if (images !== undefined && imagesOf(facts) !== images) return false;
    return over === undefined || tokensOf(facts) > over;
  };
}

function flagsOf(facts: Facts): number {
  if (facts.flags !== undefined) return facts.flags;
  const request = facts.request;
  return (facts.flags = request ? (request.stream ? STREAM : 0) | (request.tools?.length ? TOOLS : 0) | (request.thinking ? THINKING : 0) : 0);
}

/** A `when`'s conditions one by one, in the order `compile` checks them, for `parley routes explain`. */
export function conditions(when: When): Condition[] {
  const out: Condition[] = [];
  const flag = (key: string, want: boolean, of: (facts: Facts) => boolean) =>
    out.push({ says: `${key} = ${want}`, holds: (facts) => of(facts) === want, has: (facts) => `${key} is ${of(facts)}` });
  const matches = (says: string, pattern: string, of: (facts: Facts) => string | null | undefined, what: string) => {
    const test = matcher(pattern);
    out.push({
      says: `${says} = ${JSON.stringify(pattern)}`,
      holds: (facts) => {
        const value = of(facts);
        return value !== undefined && value !== null && test(value);
      },
      has: (facts) => {
        const value = of(facts);
        return value === undefined || value === null ? `no ${what}` : `${what} is ${JSON.stringify(value)}`;
      },
    });
  };
  if (when.stream !== undefined) flag("stream", when.stream, (f) => f.request?.stream === true);
  if (when.tools !== undefined) flag("tools", when.tools, (f) => (f.request?.tools?.length ?? 0) > 0);
  if (when.thinking !== undefined) flag("thinking", when.thinking, (f) => f.request?.thinking === true);
  if (when.endpoint !== undefined) matches("endpoint", when.endpoint, (f) => f.endpoint, "endpoint");
  if (when.key !== undefined) matches("key", when.key, (f) => f.key, "key label");
  for (const [name, pattern] of Object.entries(when.header ?? {})) {
    const slot = slotOf(name);
    matches(`header.${name}`, pattern, (f) => header(f, name, slot), `${name} header`);
  }
  if (when.images !== undefined) flag("images", when.images, imagesOf);
  const over = when.input_tokens_over;
  if (over !== undefined) {
    out.push({ says: `input_tokens_over = ${over}`, holds: (facts) => tokensOf(facts) > over, has: (facts) => `the estimate is ${tokensOf(facts)} input tokens` });
  }
  return out;
}

/** Every header name any route reads, numbered: a request reads each once however many routes ask. */
const SLOTS = new Map<string, number>();
const slotOf = (name: string) => SLOTS.get(name) ?? SLOTS.set(name, SLOTS.size).size - 1;

function header(facts: Facts, name: string, slot: number): string | null {
  const seen = (facts.seen ??= []);
  const value = seen[slot];
  return value !== undefined ? value : (seen[slot] = facts.headers?.get(name) ?? null);
}

export const countsTokens = (when: When | undefined) => when?.input_tokens_over !== undefined;

const tokensOf = (facts: Facts) => (facts.tokens ??= facts.request ? estimateLoaded(facts.request) : 0);

export const imagesOf = (facts: Facts) => (facts.images ??= facts.request !== undefined && hasImages(facts.request));

function hasImages(request: ChatRequest): boolean {
  for (const message of request.messages) for (const part of message.content) if (part.type === "image" || part.type === "image_url") return true;
  return false;
}
