const CLAUDE = "anthropic.claude-3-5-haiku-20241022-v1:0";
const hello = [{ role: "user", content: "Say hello" }];
/** One request per path for the profiler and the A/B runs: parley's body, and what the hop sends upstream. */
export const PATHS: Record<string, { query?: string; body: object; upstreamPath: string; upstreamBody?: object }> = {
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
};
