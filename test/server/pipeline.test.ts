/** The one pipeline: a new front door is a declaration, and gets every per-request step from it. */
import { describe, expect, test } from "bun:test";
import type { Chat } from "../../src/core/chat.ts";
import { createLogger } from "../../src/log.ts";
import { Database } from "bun:sqlite";
import { envKeys } from "../../src/keys/env-keys.ts";
import { activeKey, createKeyLookup } from "../../src/keys/lookup.ts";
import { createSqliteKeyStore } from "../../src/keys/sqlite-store.ts";
import { corsHeaders } from "../../src/server/edge/cors.ts";
import type { Endpoint } from "../../src/server/edge/endpoint.ts";
import { createPipeline, REQUEST_ID } from "../../src/server/edge/pipeline.ts";

const KEY = "sk-pipeline-test-key-0001";
const signedKey = activeKey({
  id: "signed", source: "runtime", name: "signed", prefix: "pk-0000000", scopes: ["chat"], models: null, routes: null, upstreams: null, budget: null,
  rpm: null, tpm: null, expires_at: null, disabled: false, revoked_at: null, metadata: {}, created_at: 0, last_used_at: null,
});
const MODELS_ONLY = "sk-pipeline-models-only-01";

const declared: Endpoint[] = [
  {
    kind: "plain", method: "POST", path: "/v1/echo/:name", scope: "chat", errors: "parley", body: "json",
    answer: ({ params, body, query, headers }) => {
      headers["x-echo"] = "1";
      return { name: params[0], body, query };
    },
    openapi: { summary: "Echo" },
  },
  { kind: "plain", method: "GET", path: "/v1/vendor", scope: "models", errors: "anthropic", answer: () => ({ ok: true }) },
  {
    kind: "plain", method: "GET", path: "/aws/:id", scope: "models", errors: "bedrock", unlisted: true,
    answer: ({ params }) => {
      if (params[0] === "missing") throw Object.assign(new Error("x"), { status: 404 });
      return { id: params[0] };
    },
  },
  {
    kind: "plain", method: "POST", path: "/signed", scope: "chat", errors: "parley",
    signature: {
      signed: (request) => request.headers.get("authorization")?.startsWith("Sig ") === true,
      precheck: () => {},
      principal: (_request, body) => ({ label: `signed:${body}`, scopes: new Set(["chat"]), key: { ...signedKey, label: `signed:${body}` } }),
    },
    answer: ({ principal }) => ({ who: principal!.label }),
  },
  { kind: "plain", method: "GET", path: "/open", errors: "parley", answer: () => "plain text" },
  { kind: "plain", method: "GET", path: "/admin/v1/thing", scope: ["admin", "usage"], errors: "parley", cors: false, answer: () => ({ ok: true }) },
];

const chat = (() => Promise.reject(new Error("no chat here"))) as unknown as Chat;
const lookup = createKeyLookup(createSqliteKeyStore(() => new Database(":memory:")), {
  fixed: envKeys([{ key: KEY, label: "main", scopes: ["chat", "models", "admin"] }, { key: MODELS_ONLY, label: "models-only", scopes: ["models"] }]),
});
const guard = { identify: lookup.identify };
const pipeline = createPipeline(declared, {
  chat, guard, log: createLogger("silent"), debug: false, maxBody: 1000, cors: corsHeaders("*", [REQUEST_ID]),
});
const call = (path: string, init: RequestInit = {}, key: string | null = KEY) => {
  const headers = new Headers(init.headers);
  if (key) headers.set("authorization", `Bearer ${key}`);
  return pipeline.handle(new Request(`http://localhost${path}`, { ...init, headers }));
};

describe("a declared endpoint", () => {
  test("gets an id, its key checked, its body read, its path and query parsed", async () => {
    const response = await call("/v1/echo/abc/?x=1&x=2", { method: "POST", body: JSON.stringify({ a: 1 }) });
    expect(response.status).toBe(200);
    expect(response.headers.get(REQUEST_ID)).toBeTruthy();
    expect(response.headers.get("x-echo")).toBe("1");
    expect(await response.json()).toEqual({ name: "abc", body: { a: 1 }, query: { x: "2" } });
    expect((await call("/v1/echo/abc", { method: "POST", body: "{}" }, null)).status).toBe(401);
    expect((await call("/v1/echo/abc", { method: "POST", body: "{}" }, MODELS_ONLY)).status).toBe(403);
  });

  test("a bad body or one over the limit is the client's error, in the endpoint's envelope", async () => {
    const bad = await call("/v1/echo/abc", { method: "POST", body: "{nope" });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toContain("not valid JSON");
    const big = await call("/v1/echo/abc", { method: "POST", body: "x".repeat(1001) });
    expect(big.status).toBe(413);
  });

  test("another method on its path is 405, an unknown path 404; an unlisted endpoint's path is unknown to other methods", async () => {
    expect((await call("/v1/echo/abc")).status).toBe(405);
    expect((await call("/v1/nothing")).status).toBe(404);
    expect((await call("/aws/x", { method: "POST" })).status).toBe(404);
    expect(pipeline.routes).toEqual([
      { method: "POST", path: "/v1/echo/:name" }, { method: "GET", path: "/v1/vendor" }, { method: "POST", path: "/signed" }, { method: "GET", path: "/open" }, { method: "GET", path: "/admin/v1/thing" },
    ]);
  });

  test("HEAD is its GET without the body", async () => {
    const response = await call("/open", { method: "HEAD" }, null);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-length")).toBe(String("plain text".length));
    expect(await response.text()).toBe("");
  });

  test("each dialect has its id header and its envelope", async () => {
    const anthropic = await call("/v1/vendor");
    expect(anthropic.headers.get("request-id")).toBe(anthropic.headers.get(REQUEST_ID));
    const denied = await call("/v1/vendor", {}, null);
    expect(await denied.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    expect(denied.headers.get("request-id")).toBeTruthy();
    const aws = await call("/aws/x");
    expect(aws.headers.get("x-amzn-requestid")).toBe(aws.headers.get(REQUEST_ID));
    const awsDenied = await call("/aws/x", {}, MODELS_ONLY.replace("01", "99"));
    expect(awsDenied.status).toBe(403);
    expect(awsDenied.headers.get("x-amzn-errortype")).toStartWith("AccessDeniedException");
    // Not a GatewayError: a bug, answered 500 in the dialect, quoting the id.
    const bug = await call("/aws/missing");
    expect(bug.status).toBe(500);
    expect((await bug.json()).message).toContain(bug.headers.get(REQUEST_ID)!);
  });

  test("a signed request stands for its signature's principal, the body read first", async () => {
    const response = await call("/signed", { method: "POST", body: "payload", headers: { authorization: "Sig abc" } }, null);
    expect(await response.json()).toEqual({ who: "signed:payload" });
  });

  test("CORS: a preflight is answered before the key is asked; answers carry the exposed headers", async () => {
    const preflight = await call("/v1/echo/abc", { method: "OPTIONS", headers: { origin: "https://a.example", "access-control-request-method": "POST" } }, null);
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://a.example");
    const answer = await call("/v1/vendor", { headers: { origin: "https://a.example" } });
    expect(answer.headers.get("access-control-expose-headers")).toBe(REQUEST_ID);
  });

  test("a declaration without CORS (the admin API) gets no CORS headers and no preflight", async () => {
    const preflight = await call("/admin/v1/thing", { method: "OPTIONS", headers: { origin: "https://a.example", "access-control-request-method": "GET" } }, null);
    expect(preflight.status).not.toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    const answer = await call("/admin/v1/thing", { headers: { origin: "https://a.example" } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("a declaration taking any of several scopes admits a key with one of them, and names them all to a key with none", async () => {
    expect((await call("/admin/v1/thing")).status).toBe(200);
    const refused = await call("/admin/v1/thing", {}, MODELS_ONLY);
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.message).toContain("'admin' or 'usage'");
  });
});

test("a parameter may have a literal tail, as Gemini's paths do", async () => {
  const gemini = createPipeline([
    { kind: "plain", method: "POST", path: "/v1beta/models/:model:generateContent", scope: "chat", errors: "parley", answer: ({ params }) => ({ model: params[0] }) },
    { kind: "plain", method: "POST", path: "/v1beta/models/:model:countTokens", scope: "chat", errors: "parley", answer: () => ({ count: true }) },
  ], { chat, guard, log: createLogger("silent"), debug: false, maxBody: 1000, cors: corsHeaders("*", []) });
  const post = (path: string) => gemini.handle(new Request(`http://localhost${path}`, { method: "POST", headers: { authorization: `Bearer ${KEY}` } }));
  expect(await (await post("/v1beta/models/gemini-2.5-pro:generateContent")).json()).toEqual({ model: "gemini-2.5-pro" });
  expect(await (await post("/v1beta/models/gemini-2.5-pro:countTokens")).json()).toEqual({ count: true });
  expect((await post("/v1beta/models/:generateContent")).status).toBe(404);
});
