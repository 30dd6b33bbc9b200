import { describe, expect, test } from "bun:test";
import { TEST_KEY, testApp } from "../lib/app.ts";

const { app, call } = testApp({ ALPHA_API_KEY: "sk-upstream-secret-123456", API_KEYS: "sk-models-only-key-0001:models" });
const OPEN = new Set(["/health", "/v1/chat/completions/health", "/v1/files/health"]);
const protectedRoutes = app.routes.filter((r) => r.path.startsWith("/v1") && !OPEN.has(r.path) && r.method !== "OPTIONS");

async function expectEnvelope(response: Response, status: number, type: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toContain("application/json");
  const body = (await response.json()) as { error: { type: string; message: string } };
  expect(body.error.type).toBe(type);
  expect(body.error.message.length).toBeGreaterThan(0);
  return body;
}

describe("authentication on every /v1 route", () => {
  test("there are protected routes to check", () => {
    expect(protectedRoutes.map((r) => r.path)).toContain("/v1/models");
  });

  for (const route of protectedRoutes) {
    const path = route.path.replace(/\/:[a-z_]+/g, "/file-abcdefghijklmnopqrstuvwx");
    // Each endpoint answers in its vendor's dialect (contract 9): OpenAI calls a bad key an invalid request, Google UNAUTHENTICATED.
    const type = ["/v1/responses", "/v1/responses/compact", "/v1/embeddings", "/v1/completions"].includes(path) ? "invalid_request_error" : "authentication_error";
    const gemini = path.startsWith("/v1beta/") || /^\/v1\/models\/[^/]+:/.test(path);
    const expected = async (response: Response) => {
      if (!gemini) return expectEnvelope(response, 401, type);
      expect(response.status).toBe(401);
      expect((await response.json()).error).toMatchObject({ code: 401, status: "UNAUTHENTICATED" });
    };
    test(`${route.method} ${route.path} without a key: 401`, async () => {
      await expected(await call(path, { method: route.method, key: null }));
    });
    test(`${route.method} ${route.path} with a wrong key: 401`, async () => {
      await expected(await call(path, { method: route.method, key: "sk-wrong" }));
    });
  }

  test("Bearer and x-api-key are both accepted", async () => {
    expect((await call("/v1/models")).status).toBe(200);
    expect((await call("/v1/models", { key: null, headers: { "x-api-key": TEST_KEY } })).status).toBe(200);
  });

  test("a key of a different length or a prefix of the real one is refused", async () => {
    await expectEnvelope(await call("/v1/models", { key: TEST_KEY.slice(0, -1) }), 401, "authentication_error");
    await expectEnvelope(await call("/v1/models", { key: `${TEST_KEY}x` }), 401, "authentication_error");
  });

  test("health and docs are open", async () => {
    for (const path of ["/health", "/v1/chat/completions/health", "/docs"]) {
      expect((await call(path, { key: null })).status).toBe(200);
    }
  });
});

describe("the error envelope for the framework's own failures", () => {
  test("unknown route: 404 not_found_error", async () => {
    const body = await expectEnvelope(await call("/v1/nothing-here"), 404, "not_found_error");
    expect(body.error.message).toContain("/v1/nothing-here");
    await expectEnvelope(await call("/nope", { key: null }), 404, "not_found_error");
  });

  test("wrong method on a known path: 405", async () => {
    await expectEnvelope(await call("/v1/models", { method: "DELETE" }), 405, "invalid_request_error");
    await expectEnvelope(await call("/health", { method: "POST" }), 405, "invalid_request_error");
  });

  test("every response carries X-Request-Id, and a client's own id is kept", async () => {
    for (const path of ["/health", "/v1/models", "/nope"]) {
      expect((await call(path)).headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect((await call("/v1/models", { key: null })).headers.get("x-request-id")).toBeTruthy();
    expect((await call("/health", { headers: { "x-request-id": "trace-42" } })).headers.get("x-request-id")).toBe("trace-42");
  });
});

describe("health", () => {
  test("/health has the spec's fields and tells configured from not configured", async () => {
    const body = await (await call("/health", { key: null })).json();
    expect(body).toEqual({ status: "healthy", timestamp: expect.any(String), version: expect.stringMatching(/^\d+\.\d+\.\d+/), services: { alpha: "available", beta: "not_configured", mock: "available" } });
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
  });

  test("/v1/chat/completions/health has the spec's fields", async () => {
    const body = await (await call("/v1/chat/completions/health", { key: null })).json();
    expect(body).toMatchObject({
      status: "healthy",
      version: expect.any(String),
      message: expect.any(String),
      supported_input_formats: ["alpha", "beta_messages", "beta_textgen"],
      model_routing: "enabled",
    });
    expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
  });
});

describe("models", () => {
  test("lists models of configured providers only, in the spec's shape", async () => {
    const body = await (await call("/v1/models")).json();
    expect(body.object).toBe("list");
    expect(body.data.length).toBeGreaterThan(0);
    for (const model of body.data) {
      expect(model).toEqual({ id: expect.any(String), object: "model", created: expect.any(Number), owned_by: expect.any(String), provider: expect.stringMatching(/^(alpha|beta|mock)$/) });
    }
    expect(body.data.some((m: { id: string }) => m.id.startsWith("gpt-"))).toBe(true);
    expect(body.data.some((m: { id: string }) => m.id.startsWith("anthropic."))).toBe(false);
  });

  test("a key without the models scope gets 403, one with it gets 200", async () => {
    const scoped = testApp({ API_KEYS: "sk-chat-only-key-00001:chat,sk-models-only-key-0001:models" });
    await expectEnvelope(await scoped.call("/v1/models", { key: "sk-chat-only-key-00001" }), 403, "permission_error");
    expect((await scoped.call("/v1/models", { key: "sk-models-only-key-0001" })).status).toBe(200);
  });
});

describe("docs", () => {
  test("/docs renders from assets the server itself serves", async () => {
    const html = await (await call("/docs", { key: null })).text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      expect(asset.startsWith("/docs/assets/")).toBe(true);
      const response = await call(asset, { key: null });
      expect(response.status).toBe(200);
      expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    }
  });

  test("the OpenAPI document lists the API", async () => {
    const spec = await (await call("/docs/json", { key: null })).json();
    expect(spec.info.title).toBe("parley");
    expect(Object.keys(spec.paths)).toContain("/v1/models");
  });
});

describe("CORS", () => {
  test("all origins in development", async () => {
    const response = await call("/health", { headers: { origin: "https://app.example" } });
    expect(response.headers.get("access-control-allow-origin")).toBe("https://app.example");
  });

  test("only CORS_ORIGINS in production", async () => {
    const prod = testApp({ ENVIRONMENT: "production", CORS_ORIGINS: "https://ok.example" });
    expect((await prod.call("/health", { headers: { origin: "https://ok.example" } })).headers.get("access-control-allow-origin")).toBe("https://ok.example");
    expect((await prod.call("/health", { headers: { origin: "https://evil.example" } })).headers.get("access-control-allow-origin")).toBeNull();
  });

  test("a browser's preflight is answered with what it asked for", async () => {
    const response = await call("/v1/chat/completions", {
      method: "OPTIONS",
      key: null,
      headers: { origin: "https://app.example", "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type, x-stainless-os" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(response.headers.get("access-control-allow-methods")).toContain("POST");
    expect(response.headers.get("access-control-allow-headers")).toBe("authorization, content-type, x-stainless-os");
    expect(response.headers.get("x-request-id")).toBeTruthy();
  });

  test("browsers may read the request id and rate-limit headers; clients without an Origin get no CORS headers", async () => {
    const browser = await call("/v1/models", { headers: { origin: "https://app.example" } });
    expect(browser.headers.get("access-control-expose-headers")).toContain("x-ratelimit-remaining");
    expect(browser.headers.get("access-control-expose-headers")).toContain("x-request-id");
    expect(browser.headers.get("access-control-expose-headers")).toContain("x-parley-attempts");
    const script = await call("/v1/models");
    expect([...script.headers.keys()].filter((name) => name.startsWith("access-control-"))).toEqual([]);
  });
});
