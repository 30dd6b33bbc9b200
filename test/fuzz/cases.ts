import type { ErrorDialect } from "../../src/errors.ts";
import { faultModels, type Fault } from "../lib/faulty-upstream.ts";
import { brokenJson, seedBody, type BodyKind } from "./bodies.ts";
import { upload } from "./multipart.ts";
import { describe, LONE_SURROGATES, mutate, nasty, oddString, PROTO_KEYS, rawInvalidUtf8, setOwn, type Rng } from "./values.ts";

/** How a successful reply must look: a stream's last event, a JSON reply's shape. */
export type ReplyFormat = "alpha" | "beta_messages" | "beta_textgen" | "responses" | "count_tokens" | "gemini" | "json" | "any";

export interface FuzzCase {
  id: number;
  endpoint: string;
  label: string;
  method: string;
  path: string;
  /** Pairs, so a header can come twice. */
  headers: [string, string][];
  body?: string | Uint8Array;
  /** Error envelope expected on a 4xx/5xx. */
  dialect: ErrorDialect;
  reply: ReplyFormat;
  /** The call reaches an upstream told to misbehave (or a mock model that fails): 5xx is expected. */
  faulty: boolean;
  /** A request the server should accept: a 4xx would be a bug too. */
  valid?: boolean;
  /** Same family, so the upstream's stream is relayed byte for byte (contract 9): its events are not parsed. */
  relayed?: boolean;
  /** The upstream's reply is broken: a success (or a stream that ends normally) would hand it on. */
  expectFailure?: boolean;
  /** MODEL_FALLBACKS end at this model, which must be the one that answered. */
  expectModel?: string;
}

export interface Context {
  apiKey: string;
  maxUploadBytes: number;
  /** Share of chat-like cases sent to a model whose upstream misbehaves. */
  faultRate: number;
  /** Ids of files that exist, for realistic GET/DELETE cases. */
  fileIds: string[];
}

type Make = (r: Rng, ctx: Context) => Omit<FuzzCase, "id" | "endpoint" | "method" | "dialect" | "headers"> & { headers?: [string, string][] };

/** One row per endpoint. Native endpoints that a build lacks answer 404 and are skipped (`optional`). */
export interface Endpoint {
  name: string;
  method: string;
  auth: boolean;
  /** Weight in the mix. */
  weight: number;
  optional?: boolean;
  make: Make;
}

const FORMAT_NAMES: Record<string, "alpha" | "beta_messages" | "beta_textgen"> = {
  alpha: "alpha", openai: "alpha", beta_messages: "beta_messages", anthropic: "beta_messages", bedrock_claude: "beta_messages",
  beta_textgen: "beta_textgen", titan: "beta_textgen", bedrock_titan: "beta_textgen",
};

const GOOD_MODELS: Record<BodyKind, string[]> = {
  alpha: ["gpt-4o-mini", "mock", "mock/tools", "anthropic.claude-3-5-haiku-20241022-v1:0", "meta.llama3-8b-instruct-v1:0", "amazon.titan-text-express-v1", "us.anthropic.claude-3-haiku-20240307-v1:0"],
  beta_messages: ["anthropic.claude-3-5-haiku-20241022-v1:0", "mock", "gpt-4o-mini", "amazon.titan-text-express-v1", "mistral.mistral-large-2402-v1:0"],
  beta_textgen: ["amazon.titan-text-express-v1", "mock", "gpt-4o-mini", "anthropic.claude-3-5-haiku-20241022-v1:0"],
  messages: ["claude-3-5-haiku-20241022", "anthropic.claude-3-5-haiku-20241022-v1:0", "mock", "gpt-4o-mini", "mock/tools"],
  count_tokens: ["claude-3-5-haiku-20241022", "anthropic.claude-3-5-haiku-20241022-v1:0", "mock", "gpt-4o-mini"],
  responses: ["gpt-4o-mini", "mock", "anthropic.claude-3-5-haiku-20241022-v1:0", "mock/tools"],
  gemini: ["gpt-4o-mini", "mock", "anthropic.claude-3-5-haiku-20241022-v1:0", "claude-3-5-haiku-20241022"],
};
/** Models whose answer is an error on purpose. */
const FAILING_MOCKS = ["mock/error-429", "mock/error-503"];
/** Aliases the fuzz server is started with: prototype names as keys and as values. */
export const FUZZ_ALIASES = "__proto__=mock,constructor=gpt-4o-mini,toString=__proto__,valueOf=constructor,hasOwnProperty=anthropic.claude-3-5-haiku-20241022-v1:0";
export const FUZZ_ROUTES = "prototype*=mock,then=alpha";
export const FUZZ_FALLBACKS = "gpt-fault-reset-before-headers=mock,anthropic.fault-error-500-html=gpt-fault-html|mock,constructor=__proto__|mock";

function pickModel(r: Rng, kind: BodyKind, ctx: Context): { model: unknown; faulty: boolean } {
  if (r.chance(ctx.faultRate)) {
    const { openai, bedrock } = faultModels();
    if (r.chance(0.08)) return { model: r.pick(FAILING_MOCKS), faulty: true };
    return { model: r.pick(r.chance(0.4) ? openai : bedrock), faulty: true };
  }
  const roll = r.int(10);
  if (roll < 7 && r.chance(0.1)) return { model: `${r.pick(GOOD_MODELS[kind])}${r.pick(LONE_SURROGATES)}`, faulty: false };
  if (roll < 7) return { model: r.pick(GOOD_MODELS[kind]), faulty: false };
  if (roll < 8) return { model: r.pick(PROTO_KEYS), faulty: false };
  if (roll < 9) return { model: oddString(r), faulty: false };
  return { model: nasty(r), faulty: false };
}

/** A JSON endpoint's case: a valid body broken 0 to 3 times, or text that is no JSON object. */
function jsonCase(kind: BodyKind, reply: (r: Rng) => { path: string; reply: ReplyFormat }): Make {
  return (r, ctx) => {
    const target = reply(r);
    if (r.chance(0.15)) {
      const broken = brokenJson(r);
      return { label: `json: ${broken.label}`, path: target.path, body: broken.body, reply: target.reply, faulty: false };
    }
    const stream = r.chance(0.45);
    const { model, faulty } = pickModel(r, kind, ctx);
    const body = seedBody(r, kind, "", stream);
    setOwn(body, "model", model);
    const changes: string[] = [];
    const rounds = faulty ? r.int(2) : r.pick([0, 1, 1, 2, 3]);
    for (let i = 0; i < rounds; i++) changes.push(mutate(r, body));
    const label = `${kind} model=${describe(model)} stream=${stream}${changes.length ? `; ${changes.join("; ")}` : ""}`;
    const relayed = typeof model === "string" && model.startsWith("gpt-") && ((kind === "alpha" && target.reply === "alpha") || kind === "responses");
    if (!faulty && r.chance(0.08)) {
      const raw = rawInvalidUtf8(r, body);
      return { label: `${label}; ${raw.label}`, path: target.path, body: raw.bytes, reply: target.reply, faulty, relayed };
    }
    return { label, path: target.path, body: JSON.stringify(body), reply: target.reply, faulty, relayed };
  };
}

/**
 * Gemini's front door: the model is in the path (`:method` after it), the body has none; a `model`
 * the mutations put in it is one more field the decoder meets.
 */
const geminiCase: Make = (r, ctx) => {
  const { model, faulty } = pickModel(r, "gemini", ctx);
  const method = r.pick(["generateContent", "streamGenerateContent", "streamGenerateContent", "countTokens"]);
  const query = method === "streamGenerateContent" ? r.pick(["?alt=sse", "?alt=sse", "?alt=sse", "", "?alt=json", "?alt=sse&alt=x"]) : "";
  const path = `/${r.pick(["v1beta", "v1"])}/models/${typeof model === "string" ? pathPart(model) || "%20" : "x"}:${method}${query}`;
  const made = jsonCase("gemini", () => ({ path, reply: "gemini" }))(r, ctx);
  return { ...made, path, label: `${method} ${made.label}`, faulty: made.faulty || faulty, relayed: false };
};

function chatTarget(r: Rng): { path: string; reply: ReplyFormat } {
  const roll = r.int(10);
  if (roll < 3) return { path: "/v1/chat/completions", reply: "alpha" };
  if (roll < 8) {
    const name = r.pick(Object.keys(FORMAT_NAMES));
    return { path: `/v1/chat/completions?target_format=${name}`, reply: FORMAT_NAMES[name]! };
  }
  const odd = r.pick([...PROTO_KEYS, "", "ALPHA", "alpha&target_format=beta_textgen", "%00", "%ZZ", "beta_messages%00", encodeURIComponent("\u202e"), "x".repeat(5000)]);
  return { path: `/v1/chat/completions?target_format=${odd}`, reply: "any" };
}

/** A path segment from any string; lone surrogates become U+FFFD first (encodeURIComponent refuses them). */
const pathPart = (text: string) => encodeURIComponent(text.toWellFormed());

const chatKinds: BodyKind[] = ["alpha", "beta_messages", "beta_textgen"];

/** Path ids that are not files: wrong form, traversal, prototype names, odd bytes, huge. */
function badId(r: Rng, ctx: Context): string {
  if (ctx.fileIds.length && r.chance(0.15)) return r.pick(ctx.fileIds);
  return r.pick([
    () => "file-" + "A".repeat(24),
    () => "file-" + "a".repeat(23),
    () => "file-" + "a".repeat(25),
    () => "file-" + "-".repeat(24),
    () => r.pick(PROTO_KEYS),
    () => `file-${r.pick(PROTO_KEYS)}`,
    () => "..%2F..%2Fetc%2Fpasswd",
    () => "%2e%2e",
    () => "file-%00" + "a".repeat(21),
    () => pathPart(oddString(r)) || "%20",
    () => "x".repeat(10_000),
    () => "file-ÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀÀ".normalize(),
    () => "%F0%9F%98%80",
    () => "%ff%fe",
    () => "file-abc;drop",
  ])();
}

const plainGet = (paths: ((r: Rng, ctx: Context) => string)[], reply: ReplyFormat = "json"): Make => (r, ctx) => {
  const path = r.pick(paths)(r, ctx);
  return { label: `GET ${path.slice(0, 80)}`, path, reply, faulty: false };
};

const oddQuery = (r: Rng) => r.pick([
  "", "?__proto__=1", "?constructor[prototype][x]=1", "?limit=__proto__", "?limit=-1", "?limit=1e3", "?limit=0", "?limit=100", "?limit=101", "?limit=2.5",
  "?purpose=__proto__", "?purpose=%00", "?after=constructor", "?after=file-" + "A".repeat(24), "?limit=5&limit=6", "?%ZZ=1", "?after_id=x&before_id=y",
  "?" + "a=1&".repeat(2000),
]);

export const ENDPOINTS: Endpoint[] = [
  { name: "chat", method: "POST", auth: true, weight: 30, make: (r, ctx) => jsonCase(r.pick(chatKinds), chatTarget)(r, ctx) },
  { name: "messages", method: "POST", auth: true, weight: 10, optional: true, make: jsonCase("messages", (r) => ({ path: r.chance(0.3) ? "/v1/messages?beta=true" : "/v1/messages", reply: "beta_messages" })) },
  { name: "count_tokens", method: "POST", auth: true, weight: 4, optional: true, make: jsonCase("count_tokens", () => ({ path: "/v1/messages/count_tokens", reply: "count_tokens" })) },
  { name: "responses", method: "POST", auth: true, weight: 10, optional: true, make: jsonCase("responses", () => ({ path: "/v1/responses", reply: "responses" })) },
  { name: "gemini", method: "POST", auth: true, weight: 6, optional: true, make: geminiCase },
  {
    name: "files-upload", method: "POST", auth: true, weight: 12,
    make: (r, ctx) => {
      const u = upload(r, ctx.maxUploadBytes);
      return { label: `upload: ${u.label}`, path: "/v1/files", body: u.body, headers: u.contentType === undefined ? [] : [["content-type", u.contentType]], reply: "json", faulty: false, valid: u.valid };
    },
  },
  { name: "files-list", method: "GET", auth: true, weight: 3, make: plainGet([(r) => `/v1/files${oddQuery(r)}`]) },
  { name: "files-get", method: "GET", auth: true, weight: 4, make: plainGet([(r, ctx) => `/v1/files/${badId(r, ctx)}`, (r, ctx) => `/v1/files/${badId(r, ctx)}/content`], "any") },
  {
    name: "files-delete", method: "DELETE", auth: true, weight: 3,
    make: (r, ctx) => {
      const path = `/v1/files/${badId(r, ctx)}`;
      return { label: `DELETE ${path.slice(0, 80)}`, path, reply: "json", faulty: false };
    },
  },
  { name: "models", method: "GET", auth: true, weight: 3, make: plainGet([(r) => `/v1/models${oddQuery(r)}`, (r) => `/v1/models/${pathPart(oddString(r)) || "x"}`, (r) => `/v1/models/${r.pick(PROTO_KEYS)}`], "any") },
  { name: "health", method: "GET", auth: false, weight: 2, make: plainGet([(r) => `/health${oddQuery(r)}`, () => "/v1/files/health", () => "/v1/chat/completions/health"]) },
  { name: "docs", method: "GET", auth: false, weight: 2, make: plainGet([() => "/docs", () => "/docs/json", () => "/docs/assets/swagger-ui.css", (r) => `/docs/${pathPart(oddString(r))}`, () => "/docs/assets/..%2F..%2Fpackage.json"], "any") },
  {
    name: "wrong-method", method: "VARIES", auth: true, weight: 3,
    make: (r) => {
      const path = r.pick(["/v1/chat/completions", "/v1/files", "/v1/models", "/health", "/v1/messages", "/v1/responses", "/nope", "/" + r.pick(PROTO_KEYS), "/v1/" + r.pick(PROTO_KEYS)]);
      return { label: `wrong method on ${path}`, path, reply: "any", faulty: false };
    },
  },
];

const WRONG_METHODS = ["PUT", "PATCH", "DELETE", "GET", "POST", "OPTIONS", "HEAD"];

/** Header changes every endpoint gets now and then: auth, content type, request id, vendor headers. */
function headers(r: Rng, endpoint: Endpoint, ctx: Context, own: [string, string][]): { headers: [string, string][]; label: string } {
  const list: [string, string][] = [...own];
  const labels: string[] = [];
  const auth = r.int(100);
  if (endpoint.auth || r.chance(0.5)) {
    if (auth < 80) list.push(r.chance(0.7) ? ["authorization", `Bearer ${ctx.apiKey}`] : ["x-api-key", ctx.apiKey]);
    else if (auth < 84) labels.push("no key");
    else if (auth < 88) (list.push(["authorization", "Bearer sk-wrong"]), labels.push("wrong key"));
    else if (auth < 91) (list.push(["authorization", `Bearer ${ctx.apiKey}`], ["authorization", "Bearer other"]), labels.push("two authorization headers"));
    else if (auth < 94) (list.push(["authorization", `Basic ${btoa("user:" + ctx.apiKey)}`]), labels.push("basic auth"));
    else if (auth < 97) (list.push(["authorization", "Bearer "], ["x-api-key", " "]), labels.push("blank keys"));
    else (list.push(["x-api-key", "__proto__"]), labels.push("prototype key"));
  }
  const isJsonPost = endpoint.method === "POST" && endpoint.name !== "files-upload";
  if (isJsonPost) {
    const ct = r.int(100);
    if (ct < 80) list.push(["content-type", "application/json"]);
    else {
      const type = r.pick(["", "text/plain", "application/json; charset=utf-16", "multipart/form-data", "application/x-www-form-urlencoded", "application/json, application/json", "\u00e9/\u00e9", "application/xml"]);
      if (type) list.push(["content-type", type]);
      labels.push(`content-type ${JSON.stringify(type)}`);
    }
  }
  if (r.chance(0.08)) {
    const id = r.pick(["x".repeat(10_000), "", "\u00e9\u00e8", "__proto__", "a b c"]);
    list.push(["x-request-id", id]);
    if (r.chance(0.3)) list.push(["x-request-id", "second"]);
    labels.push(`x-request-id ${describe(id)}`);
  }
  if (r.chance(0.1)) {
    list.push(["anthropic-version", r.pick(["2023-06-01", "", "__proto__", "1999-01-01", "x".repeat(3000)])]);
    list.push(["anthropic-beta", r.pick(["a,,b", "__proto__,constructor", "", "prompt-caching-2024-07-31", ",".repeat(500)])]);
    labels.push("anthropic headers");
  }
  if (r.chance(0.05)) (list.push(["accept", r.pick(["text/event-stream", "application/xml", "*/*;q=foo", "\u00ff"])]), labels.push("odd accept"));
  if (r.chance(0.06)) {
    // Header values are bytes: these are a lone surrogate's CESU bytes, 0xFF 0xFE, an overlong NUL, and the escape as text.
    const name = r.pick(["x-parley-tag", "anthropic-beta", "anthropic-version", "openai-beta", "x-request-id", "x-stainless-lang", "user-agent", "origin"]);
    const value = r.pick(["\u00ed\u00a0\u0080", "\u00ff\u00fe", "\u00c0\u0080", "\\ud800", "a\u00e9b"]);
    list.push([name, value]);
    labels.push(`${name} bytes ${describe(value)}`);
  }
  return { headers: list, label: labels.join(", ") };
}

/** Contract 9: each endpoint answers errors in its vendor's envelope; /v1/models in Anthropic's when asked by an Anthropic client. */
function dialectOf(path: string, headers: [string, string][]): ErrorDialect {
  if (path.startsWith("/v1/messages") || path.startsWith("/v1/projects/")) return "anthropic";
  if (path.startsWith("/v1beta/") || /^\/v1\/models\/[^/]*:/.test(path)) return "gemini";
  if (path.startsWith("/v1/responses")) return "openai";
  if (path.startsWith("/v1/models") && headers.some(([name]) => name === "anthropic-version")) return "anthropic";
  return "parley";
}

function weighted(r: Rng, endpoints: Endpoint[]): Endpoint {
  let roll = r.next() * endpoints.reduce((n, e) => n + e.weight, 0);
  for (const e of endpoints) if ((roll -= e.weight) < 0) return e;
  return endpoints.at(-1)!;
}

/** `count` cases over `endpoints`, the same ones for the same seed. */
export function generate(seed: number, count: number, endpoints: Endpoint[], ctx: Context, rngOf: (seed: number) => Rng): FuzzCase[] {
  const cases: FuzzCase[] = [];
  for (let id = 0; id < count; id++) {
    // One generator per case: a case can be rebuilt from (seed, id) alone.
    const r = rngOf(seed * 100_003 + id);
    const endpoint = id < endpoints.length ? endpoints[id]! : weighted(r, endpoints);
    const made = endpoint.make(r, ctx);
    const method = endpoint.method === "VARIES" ? r.pick(WRONG_METHODS) : endpoint.method;
    const extra = headers(r, endpoint, ctx, made.headers ?? []);
    const body = method === "GET" || method === "HEAD" ? undefined : made.body;
    const label = [made.label, extra.label].filter(Boolean).join(" | ");
    cases.push({ ...made, id, endpoint: endpoint.name, method, dialect: dialectOf(made.path, extra.headers), headers: extra.headers, body, label, valid: made.valid && !extra.label });
  }
  return cases;
}

/** Faults a converted stream may survive: unknown events and malformed deltas are skipped, a finish without [DONE] is a finish. */
const SURVIVABLE: ReadonlySet<string> = new Set<Fault>(["sse-finish-no-done", "sse-wrong-chunk", "sse-garbage-data", "es-unknown-type", "es-wrong-chunk"]);
/** Converse has no `chunk` events: the Invoke-style chunks, broken or not, are skipped as unknown. */
const survivable = (model: string, fault: string) => SURVIVABLE.has(fault) || (model.startsWith("meta.") && fault === "es-bad-base64");
/**
 * Where FUZZ_FALLBACKS lead a failing model to the mock, which answers. The other chain
 * (anthropic.fault-error-500-html) stops at gpt-fault-html: an HTML 200 is no retryable failure.
 */
const RESCUED: Record<string, string> = { "gpt-fault-reset-before-headers": "mock" };

/**
 * Every fault model, streamed and not, as a valid request (random input and reply formats): each
 * must end as a failure in the reply's dialect, or, when fallbacks lead to the mock, as its answer.
 */
export function faultSweep(seed: number, apiKey: string, rngOf: (seed: number) => Rng): FuzzCase[] {
  const { openai, bedrock } = faultModels();
  const r = rngOf(seed);
  // OpenAI faults twice: relayed byte for byte (OpenAI in and out), and converted.
  const plans = [...openai.flatMap((model) => [{ model, relay: true }, { model, relay: false }]), ...bedrock.map((model) => ({ model, relay: false }))];
  return plans.flatMap(({ model, relay }) => [false, true].map((stream): FuzzCase => {
    const kind = relay ? "alpha" : r.pick(chatKinds);
    const target = relay ? { path: "/v1/chat/completions", reply: "alpha" as const } : chatTarget(r);
    const reply = target.reply === "any" ? "alpha" : target.reply;
    const path = target.reply === "any" ? "/v1/chat/completions" : target.path;
    const fault = model.slice(model.indexOf("fault-") + 6);
    const rescued = Object.hasOwn(RESCUED, model) ? RESCUED[model] : undefined;
    const relayed = model.startsWith("gpt-") && kind === "alpha" && reply === "alpha";
    return {
      id: 0, endpoint: "chat", label: `fault sweep: ${kind} -> ${reply} model=${model} stream=${stream}`, method: "POST", path,
      headers: [["authorization", `Bearer ${apiKey}`], ["content-type", "application/json"]], body: JSON.stringify(seedBody(r, kind, model, stream)),
      dialect: "parley", reply, faulty: true, relayed,
      expectFailure: !rescued && !(stream && survivable(model, fault)), expectModel: rescued,
    };
  })).map((c, id) => ({ ...c, id }));
}
