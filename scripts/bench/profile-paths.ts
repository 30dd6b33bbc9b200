const CLAUDE = "anthropic.claude-3-5-haiku-20241022-v1:0";
const hello = [{ role: "user", content: "Say hello" }];
const claudeInvoke = { anthropic_version: "bedrock-2023-05-31", max_tokens: 50, messages: hello };
/** How an Anthropic client calls (`/v1/messages`): the key as x-api-key, anthropic-version. */
const anthropicClient = { endpoint: "/v1/messages", headers: { "x-api-key": "KEY", "anthropic-version": "2023-06-01" } };

/**
 * One request per path for the profiler and the A/B runs: parley's body (to `endpoint`, default
 * /v1/chat/completions, with `headers` instead of a bearer key; "KEY" stands for the bench's key),
 * and what the hop sends upstream.
 */
export interface BenchPath {
  endpoint?: string;
  headers?: Record<string, string>;
  query?: string;
  body: object;
  upstreamPath: string;
  upstreamBody?: object;
  /** It needs an `anthropic` upstream (a parley.toml: see `anthropicUpstream` in processes.ts). */
  anthropic?: boolean;
}

export const PATHS: Record<string, BenchPath> = {
  json: { body: { model: "gpt-4o-mini", messages: hello, max_tokens: 50 }, upstreamPath: "/v1/chat/completions" },
  stream: { body: { model: "gpt-4o-mini", stream: true, messages: hello, max_tokens: 50 }, upstreamPath: "/v1/chat/completions" },
  bedrock: {
    body: { model: CLAUDE, messages: hello, max_tokens: 50 }, upstreamPath: `/model/${encodeURIComponent(CLAUDE)}/invoke`,
    upstreamBody: { anthropic_version: "bedrock-2023-05-31", max_tokens: 50, messages: hello },
  },
  anthropic: { query: "?target_format=beta_messages", body: { model: "gpt-4o-mini", messages: hello, max_tokens: 50 }, upstreamPath: "/v1/chat/completions" },
  converse: {
    body: { model: "meta.llama3-8b-instruct-v1:0", messages: hello, max_tokens: 50 }, upstreamPath: "/model/meta.llama3-8b-instruct-v1%3A0/converse",
    upstreamBody: { messages: [{ role: "user", content: [{ text: "Say hello" }] }] },
  },
  mock: { body: { model: "mock", messages: hello, max_tokens: 50 }, upstreamPath: "/v1/chat/completions", upstreamBody: { model: "gpt-4o-mini", messages: hello } },
  // Same family, lossless: an Anthropic client to Bedrock Claude, and a Responses passthrough.
  messages: { ...anthropicClient, body: { model: CLAUDE, max_tokens: 50, messages: hello }, upstreamPath: `/model/${encodeURIComponent(CLAUDE)}/invoke`, upstreamBody: claudeInvoke },
  "messages-stream": {
    ...anthropicClient, body: { model: CLAUDE, max_tokens: 50, stream: true, messages: hello },
    upstreamPath: `/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`, upstreamBody: claudeInvoke,
  },
  // Same family on the Anthropic API: the body and the reply passed through.
  "anthropic-api": { ...anthropicClient, anthropic: true, body: { model: "claude-sonnet-4-5", max_tokens: 50, messages: hello }, upstreamPath: "/v1/messages" },
  "anthropic-api-stream": { ...anthropicClient, anthropic: true, body: { model: "claude-sonnet-4-5", max_tokens: 50, stream: true, messages: hello }, upstreamPath: "/v1/messages" },
  // Claude Code's own call, streamed to the Anthropic API: a 17 KB body (system prompt, tools, a few turns).
  "claude-code-stream": { ...anthropicClient, anthropic: true, body: claudeCodeBody(), upstreamPath: "/v1/messages" },
  responses: { endpoint: "/v1/responses", body: { model: "gpt-4o-mini", input: "Say hello" }, upstreamPath: "/v1/responses" },
  "responses-stream": { endpoint: "/v1/responses", body: { model: "gpt-4o-mini", stream: true, input: "Say hello" }, upstreamPath: "/v1/responses" },
  // Bedrock's own clients (AWS SDKs, Claude Code in Bedrock mode), passed through to Bedrock.
  "bedrock-invoke": { endpoint: `/model/${encodeURIComponent(CLAUDE)}/invoke`, body: claudeInvoke, upstreamPath: `/model/${encodeURIComponent(CLAUDE)}/invoke` },
  "bedrock-invoke-stream": {
    endpoint: `/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`, body: claudeInvoke, upstreamPath: `/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`,
  },
};

/** The request parley gets on `path`, and the headers that carry `key`. */
export function parleyRequest(path: BenchPath, key: string): { url: string; headers: Record<string, string> } {
  const headers = path.headers
    ? Object.fromEntries(Object.entries(path.headers).map(([name, value]) => [name, value === "KEY" ? key : value]))
    : { authorization: `Bearer ${key}` };
  return { url: `${path.endpoint ?? "/v1/chat/completions"}${path.query ?? ""}`, headers: { ...headers, "content-type": "application/json" } };
}

/**
 * The request the floor (floor.ts) gets on `path`: an Anthropic client's as parley gets it (the floor
 * serves /v1/messages as parley does), else the upstream's own path, as the hop gets it.
 */
export function floorRequest(path: BenchPath, key: string): { url: string; headers: Record<string, string> } {
  if (path.endpoint === "/v1/messages") return parleyRequest(path, key);
  if ((path.body as { stream?: boolean }).stream) throw new Error("the floor streams only to the Anthropic API: --path claude-code-stream");
  return { url: path.upstreamPath, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } };
}

/**
 * A request as Claude Code sends it, about 17 KB: a long system prompt in cached blocks, fifteen tools
 * with JSON schemas, and a few turns with a tool call and its result. Deterministic, so runs compare.
 */
export function claudeCodeBody(): object {
  const words = (n: number, seed: number) => Array.from({ length: n }, (_, i) => ["file", "edit", "read", "the", "code", "test", "run", "when", "user", "asks"][(i * 7 + seed) % 10]).join(" ");
  const tools = Array.from({ length: 15 }, (_, i) => ({
    name: `Tool${i}`,
    description: words(60, i),
    input_schema: {
      type: "object",
      properties: { path: { type: "string", description: words(12, i + 1) }, content: { type: "string", description: words(10, i + 2) }, limit: { type: "integer", minimum: 1 } },
      required: ["path"], additionalProperties: false,
    },
  }));
  return {
    model: "claude-sonnet-4-5", max_tokens: 32000, stream: true,
    system: [
      { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude." },
      { type: "text", text: words(960, 3), cache_control: { type: "ephemeral" } },
    ],
    tools,
    messages: [
      { role: "user", content: [{ type: "text", text: words(120, 4) }] },
      { role: "assistant", content: [{ type: "text", text: words(40, 5) }, { type: "tool_use", id: "toolu_bench1", name: "Tool1", input: { path: "src/app.ts" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_bench1", content: words(200, 6) }] },
      { role: "assistant", content: [{ type: "text", text: words(60, 7) }] },
      { role: "user", content: [{ type: "text", text: words(30, 8), cache_control: { type: "ephemeral" } }] },
    ],
    metadata: { user_id: "user_bench_session_0000" },
  };
}
