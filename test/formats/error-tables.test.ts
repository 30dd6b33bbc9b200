import { describe, expect, test } from "bun:test";
import { GatewayError } from "../../src/errors.ts";
import { anthropicError, anthropicType, streamError } from "../../src/wire/anthropic/errors.ts";
import { awsError, exceptionEvent, exceptionOf } from "../../src/wire/aws-errors.ts";
import { errorBody } from "../../src/wire/error-body.ts";
import type { Upstream } from "../../src/wire/upstream-errors.ts";

/** The one table of each dialect's errors, both ways: what each status is written as, and what each name is read as. */

const up: Upstream = { label: "Test upstream", url: "http://localhost", credentials: "TEST_KEY" };
const failing = (status: number) => new GatewayError(status, status >= 500 ? "service_unavailable_error" : "invalid_request_error", "failed");

describe("AWS exceptions", () => {
  test("a gateway status is answered with Bedrock's exception and its status", () => {
    const written = Object.fromEntries([400, 401, 403, 404, 405, 408, 413, 418, 422, 429, 500, 502, 503, 504].map((status) => [status, exceptionOf(status)]));
    expect(written).toEqual({
      400: ["ValidationException", 400], 401: ["AccessDeniedException", 403], 403: ["AccessDeniedException", 403],
      404: ["ResourceNotFoundException", 404], 405: ["ValidationException", 400], 408: ["ModelTimeoutException", 408],
      413: ["ValidationException", 400], 418: ["ValidationException", 400], 422: ["ValidationException", 400],
      429: ["ThrottlingException", 429], 500: ["InternalServerException", 500], 502: ["ServiceUnavailableException", 503],
      503: ["ServiceUnavailableException", 503], 504: ["ModelTimeoutException", 408],
    });
  });

  test("a stream fails only with the exceptions a Bedrock stream declares, named in camelCase", () => {
    const named = Object.fromEntries([400, 403, 404, 408, 429, 500, 502, 503, 504].map((status) => [status, (exceptionEvent(failing(status)).data as { type: string }).type]));
    expect(named).toEqual({
      400: "validationException", 403: "validationException", 404: "validationException", 408: "modelTimeoutException",
      429: "throttlingException", 500: "modelStreamErrorException", 502: "modelStreamErrorException",
      503: "serviceUnavailableException", 504: "modelTimeoutException",
    });
  });

  test("an upstream's exception is read by its name, however AWS writes it", () => {
    const read = (name: string, status?: number) => {
      const error = awsError(up, name, status, "words");
      return [error.status, error.retryable];
    };
    expect(read("ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/", 400)).toEqual([429, true]);
    expect(read("throttlingException")).toEqual([429, true]);
    expect(read("com.amazon.bedrock#ValidationException", 500)).toEqual([400, false]);
    expect(read("modelTimeoutException")).toEqual([504, true]);
    expect(read("ServiceQuotaExceededException")).toEqual([429, false]);
    expect(read("ModelErrorException")).toEqual([503, false]);
    expect(read("InternalServerException")).toEqual([503, true]);
    // Unknown: the status it came with, retried as that status is.
    expect(read("SomethingNewException", 502)).toEqual([503, true]);
    expect(read("SomethingNewException", 409)).toEqual([409, false]);
  });
});

describe("Anthropic error types", () => {
  test("a gateway status is written as Anthropic's type; an upstream's 529 stays an overload", () => {
    const types = Object.fromEntries([400, 401, 403, 404, 405, 413, 422, 429, 500, 502, 503, 504].map((status) => [status, anthropicType(failing(status))]));
    expect(types).toEqual({
      400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
      405: "invalid_request_error", 413: "request_too_large", 422: "invalid_request_error", 429: "rate_limit_error",
      500: "api_error", 502: "api_error", 503: "api_error", 504: "api_error",
    });
    expect(anthropicType(new GatewayError(503, "service_unavailable_error", "busy", { upstreamStatus: 529 }))).toBe("overloaded_error");
  });

  test("an error event names only its type: the status is read from it, and an Anthropic client gets the type as sent", () => {
    const overloaded = streamError(up, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, true);
    expect([overloaded.status, overloaded.anthropicType, overloaded.message, overloaded.retryable]).toEqual([529, "overloaded_error", "Overloaded", true]);
    expect(errorBody(overloaded, "anthropic")).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    expect(streamError(up, { type: "error", error: { type: "rate_limit_error", message: "slow down" } }, false).status).toBe(429);
    expect(streamError(up, { type: "error", error: { type: "no_such_error", message: "?" } }, false).status).toBe(503);
  });

  test("401 and 403 are about parley's key, never passed on as they came", () => {
    const error = anthropicError(up, 401, JSON.stringify({ type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } }), null, true);
    expect([error.status, error.anthropicType]).toEqual([502, undefined]);
  });
});

describe("error bodies in each dialect", () => {
  const overflow = new GatewayError(400, "invalid_request_error", "too long", { overflow: { limit: 1000, tokens: 1200 }, upstream: "Input is too long" });

  test("a context overflow in each vendor's words", () => {
    expect(errorBody(overflow, "anthropic")).toEqual({ type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 1200 tokens > 1000 maximum" } });
    expect(errorBody(overflow, "openai")).toMatchObject({ error: { type: "invalid_request_error", code: "context_length_exceeded", param: null } });
    expect(errorBody(overflow, "parley", true)).toMatchObject({ error: { type: "invalid_request_error", code: "context_length_exceeded", details: "Input is too long" } });
  });

  test("OpenAI's type and code by status, the failed rule in the message", () => {
    const invalid = new GatewayError(422, "validation_error", "Invalid value for 'temperature'.", { details: "temperature: must be at most 2" });
    expect(errorBody(invalid, "openai")).toEqual({ error: { message: "Invalid value for 'temperature'. (temperature: must be at most 2)", type: "invalid_request_error", param: "temperature", code: null } });
    expect(errorBody(failing(429), "openai")).toMatchObject({ error: { type: "requests", code: "rate_limit_exceeded" } });
    expect(errorBody(failing(503), "openai")).toMatchObject({ error: { type: "server_error", code: null } });
  });
});
