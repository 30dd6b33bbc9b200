// Every name parley emits, checked against the OpenTelemetry semantic conventions package at the
// pinned version: a rename in the conventions fails here, not in someone's dashboard.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ATTR_ERROR_TYPE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from "@opentelemetry/semantic-conventions";
import * as semconv from "@opentelemetry/semantic-conventions/incubating";
import { ATTR, BUCKETS, DOUBLE_ATTRIBUTES, GENAI_SEMCONV_VERSION, METRIC, providerName } from "../../src/telemetry/names.ts";

test("the installed conventions are the pinned version", () => {
  // The package's exports do not include its package.json.
  const pkg = JSON.parse(readFileSync(join(import.meta.dir, "../../node_modules/@opentelemetry/semantic-conventions/package.json"), "utf8"));
  expect(pkg.version).toBe(GENAI_SEMCONV_VERSION);
  const [major, minor] = GENAI_SEMCONV_VERSION.split(".").map(Number) as [number, number];
  expect(major * 1000 + minor).toBeGreaterThanOrEqual(1040);
});

test("the GenAI and general attributes are the conventions' names", () => {
  expect({
    operation: semconv.ATTR_GEN_AI_OPERATION_NAME,
    provider: semconv.ATTR_GEN_AI_PROVIDER_NAME,
    requestModel: semconv.ATTR_GEN_AI_REQUEST_MODEL,
    responseModel: semconv.ATTR_GEN_AI_RESPONSE_MODEL,
    responseId: semconv.ATTR_GEN_AI_RESPONSE_ID,
    finishReasons: semconv.ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
    maxTokens: semconv.ATTR_GEN_AI_REQUEST_MAX_TOKENS,
    temperature: semconv.ATTR_GEN_AI_REQUEST_TEMPERATURE,
    inputTokens: semconv.ATTR_GEN_AI_USAGE_INPUT_TOKENS,
    outputTokens: semconv.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
    cacheReadTokens: semconv.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
    cacheWriteTokens: semconv.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
    inputMessages: semconv.ATTR_GEN_AI_INPUT_MESSAGES,
    outputMessages: semconv.ATTR_GEN_AI_OUTPUT_MESSAGES,
    tokenType: semconv.ATTR_GEN_AI_TOKEN_TYPE,
    serverAddress: ATTR_SERVER_ADDRESS,
    serverPort: ATTR_SERVER_PORT,
    errorType: ATTR_ERROR_TYPE,
  }).toEqual(Object.fromEntries(Object.entries(ATTR).filter(([, name]) => !name.startsWith("parley."))) as never);
  // parley's own attributes stay out of the conventions' namespaces.
  const own = Object.values(ATTR).filter((n) => n.startsWith("parley."));
  expect(own.sort()).toEqual(["parley.cost_usd", "parley.key", "parley.route", "parley.session", "parley.upstream"]);
  expect([...DOUBLE_ATTRIBUTES].sort()).toEqual([semconv.ATTR_GEN_AI_REQUEST_TEMPERATURE, "parley.cost_usd"].sort());
});

test("the metrics and the token types", () => {
  expect(METRIC).toEqual({
    tokenUsage: semconv.METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
    operationDuration: semconv.METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
    timeToFirstToken: semconv.METRIC_GEN_AI_SERVER_TIME_TO_FIRST_TOKEN,
  });
  expect(Object.keys(BUCKETS).sort()).toEqual(Object.values(METRIC).sort());
  expect([semconv.GEN_AI_TOKEN_TYPE_VALUE_INPUT, semconv.GEN_AI_TOKEN_TYPE_VALUE_OUTPUT]).toEqual(["input", "output"]);
});

test("upstream kinds map to the conventions' provider names", () => {
  expect(providerName("openai")).toBe(semconv.GEN_AI_PROVIDER_NAME_VALUE_OPENAI);
  expect(providerName("anthropic")).toBe(semconv.GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC);
  expect(providerName("bedrock")).toBe(semconv.GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK);
  expect(providerName("gemini")).toBe(semconv.GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI);
  expect(providerName("vertex")).toBe(semconv.GEN_AI_PROVIDER_NAME_VALUE_GCP_VERTEX_AI);
  expect(providerName("mock")).toBe("mock");
});
