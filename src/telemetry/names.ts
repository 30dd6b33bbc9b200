/**
 * The names parley emits, from the OpenTelemetry GenAI semantic conventions at the version pinned
 * below (test/telemetry/semconv.test.ts checks each against @opentelemetry/semantic-conventions at
 * that version), and parley's own `parley.*` attributes.
 */

/** 1.40.0 is the first release with the cache-token attributes; the conventions are "Development". */
export const GENAI_SEMCONV_VERSION = "1.40.0";
export const SCHEMA_URL = `https://opentelemetry.io/schemas/${GENAI_SEMCONV_VERSION}`;

export const ATTR = {
  operation: "gen_ai.operation.name",
  provider: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  responseId: "gen_ai.response.id",
  finishReasons: "gen_ai.response.finish_reasons",
  maxTokens: "gen_ai.request.max_tokens",
  temperature: "gen_ai.request.temperature",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  cacheWriteTokens: "gen_ai.usage.cache_creation.input_tokens",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  tokenType: "gen_ai.token.type",
  serverAddress: "server.address",
  serverPort: "server.port",
  errorType: "error.type",
  upstream: "parley.upstream",
  route: "parley.route",
  key: "parley.key",
  costUsd: "parley.cost_usd",
  session: "parley.session",
} as const;

export type AttributeName = (typeof ATTR)[keyof typeof ATTR];
export type AttributeValue = string | number | boolean | readonly string[];
export type Attributes = Partial<Record<AttributeName, AttributeValue>>;

/** Numbers the conventions type as double even when the value happens to be whole. */
export const DOUBLE_ATTRIBUTES: ReadonlySet<string> = new Set([ATTR.temperature, ATTR.costUsd]);

export const METRIC = {
  tokenUsage: "gen_ai.client.token.usage",
  operationDuration: "gen_ai.client.operation.duration",
  timeToFirstToken: "gen_ai.server.time_to_first_token",
} as const;

/** The conventions' recommended explicit bucket boundaries for each histogram. */
export const BUCKETS = {
  [METRIC.tokenUsage]: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
  [METRIC.operationDuration]: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
  [METRIC.timeToFirstToken]: [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0],
} as const;

/**
 * `gen_ai.provider.name` for an upstream kind: the conventions' well-known values, the kind's own
 * name otherwise. An OpenAI-compatible server is "openai", as the conventions ask of a client that
 * speaks OpenAI's API.
 */
export function providerName(kind: string): string {
  switch (kind) {
    case "openai":
      return "openai";
    case "anthropic":
      return "anthropic";
    case "bedrock":
      return "aws.bedrock";
    case "gemini":
      return "gcp.gemini";
    case "vertex":
      return "gcp.vertex_ai";
    default:
      return kind;
  }
}
