/** Keys made through the admin API, in force on every front door (contract 19), each refusal in its caller's dialect. */
import { afterAll, describe, expect, test } from "bun:test";
import { startGateway, TEST_KEY } from "../lib/gateway.ts";

const gateway = await startGateway({ RATE_LIMIT_RPM: "0", API_KEYS: "reader=sk-usage-reader-0000001:usage,ops=sk-ops-admin-key-000001:admin" });
afterAll(async () => {
  await gateway.app.close();
  await gateway.stop();
});

const MODEL = "gpt-4o-mini";
const HI = [{ role: "user", content: "hi" }];

/** A key made through the admin API; the answer holds its secret. */
async function made(body: Record<string, unknown>): Promise<{ id: string; key: string; name: string }> {
  const response = await gateway.json("/admin/v1/keys", body);
  expect(response.status).toBe(201);
  return response.json();
}

/** One call on each front door a key can call, with this key: [what, its answer]. */
async function everyDoor(key: string): Promise<[string, Response][]> {
  const auth = { authorization: `Bearer ${key}` };
  const doors: [string, string, unknown][] = [
    ["openai", "/v1/chat/completions", { model: MODEL, messages: HI }],
    ["anthropic", "/v1/messages", { model: MODEL, max_tokens: 16, messages: HI }],
    ["responses", "/v1/responses", { model: MODEL, input: "hi" }],
    ["bedrock", `/model/${MODEL}/converse`, { messages: [{ role: "user", content: [{ text: "hi" }] }] }],
    ["embeddings", "/v1/embeddings", { model: "text-embedding-3-small", input: "hi" }],
    ["completions", "/v1/completions", { model: "gpt-3.5-turbo-instruct", prompt: "def f(" }],
    ["count_tokens", "/v1/messages/count_tokens", { model: MODEL, messages: HI }],
  ];
  const answers: [string, Response][] = [];
  for (const [name, path, body] of doors) answers.push([name, await gateway.json(path, body, { key: null, headers: auth })]);
  answers.push(["files", await gateway.call("/v1/files", { key: null, headers: auth })]);
  return answers;
}

describe("a key made at runtime", () => {
  test("works at once on every front door; revoked, it gets a 401 in each caller's dialect, saying why", async () => {
    const { id, key } = await made({ name: "teammate", scopes: ["chat", "models", "files:read"] });
    for (const [door, answer] of await everyDoor(key)) expect([door, answer.status]).toEqual([door, 200]);

    expect((await gateway.call(`/admin/v1/keys/${id}`, { method: "DELETE" })).status).toBe(200);
    for (const [door, answer] of await everyDoor(key)) {
      // AWS's clients know a refused key as AccessDeniedException, a 403.
      expect([door, answer.status]).toEqual([door, door === "bedrock" ? 403 : 401]);
      const text = await answer.text();
      expect(text).toContain("API key 'teammate' was revoked.");
      // Each dialect's own envelope: Anthropic's has type "error", Bedrock's a `message` alone.
      if (door === "anthropic" || door === "count_tokens") expect(JSON.parse(text).type).toBe("error");
      if (door === "bedrock") expect(JSON.parse(text).message).toContain("revoked");
    }
  });

  test("a model it may not call: 403 naming the model; /v1/models lists only its models", async () => {
    const { key } = await made({ name: "gpt-only", models: ["gpt-4o*"] });
    const headers = { authorization: `Bearer ${key}` };
    expect((await gateway.json("/v1/chat/completions", { model: MODEL, messages: HI }, { key: null, headers })).status).toBe(200);
    const refused = await gateway.json("/v1/messages", { model: "claude-sonnet-4-5", max_tokens: 16, messages: HI }, { key: null, headers });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error).toMatchObject({ type: "permission_error", message: "Key 'gpt-only' may not call model 'claude-sonnet-4-5'." });
    const listed = (await (await gateway.call("/v1/models", { key: null, headers })).json()).data as { id: string }[];
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((m) => m.id.startsWith("gpt-4o"))).toBe(true);
    const all = (await (await gateway.call("/v1/models")).json()).data as { id: string }[];
    expect(all.length).toBeGreaterThan(listed.length);
  });

  test("an upstream it may not reach: 403 naming it, and no call is made there", async () => {
    const { key } = await made({ name: "bedrock-only", upstreams: ["beta"] });
    gateway.reset();
    const refused = await gateway.json("/v1/chat/completions", { model: MODEL, messages: HI }, { key: null, headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.message).toBe(`Key 'bedrock-only' may not reach upstream 'alpha', where '${MODEL}' goes.`);
    expect(gateway.openai.received).toHaveLength(0);
  });

  test("a scope it lacks: 403 naming the scope", async () => {
    const { key } = await made({ name: "models-only", scopes: ["models"] });
    const refused = await gateway.json("/v1/chat/completions", { model: MODEL, messages: HI }, { key: null, headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.message).toContain("'chat' scope");
  });

  test("its rpm replaces RATE_LIMIT_RPM; its tpm refuses once the minute's tokens are used, naming tpm", async () => {
    const { key } = await made({ name: "slow-lane", rpm: 2 });
    const headers = { authorization: `Bearer ${key}` };
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await gateway.call("/v1/models", { key: null, headers })).status);
    expect(statuses).toEqual([200, 200, 429]);
    const third = await gateway.call("/v1/models", { key: null, headers });
    expect(third.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await third.json()).error.message).toContain("'slow-lane' (2 requests a minute)");

    const tpm = await made({ name: "few-tokens", tpm: 1 });
    const tpmHeaders = { authorization: `Bearer ${tpm.key}` };
    expect((await gateway.json("/v1/chat/completions", { model: MODEL, messages: HI }, { key: null, headers: tpmHeaders })).status).toBe(200);
    const over = await gateway.json("/v1/chat/completions", { model: MODEL, messages: HI }, { key: null, headers: tpmHeaders });
    expect(over.status).toBe(429);
    expect((await over.json()).error.message).toContain("tpm 1");
  });

  test("rotated: the old secret stops at once and its 401 says so; with grace_s it keeps working", async () => {
    const { id, key } = await made({ name: "rotating" });
    const rotated = await (await gateway.json(`/admin/v1/keys/${id}/rotate`, {})).json();
    expect(rotated.key).toMatch(/^pk-[A-Za-z0-9]{40}$/);
    const old = await gateway.call("/v1/models", { key });
    expect(old.status).toBe(401);
    expect((await old.json()).error.message).toContain("was rotated");
    expect((await gateway.call("/v1/models", { key: rotated.key })).status).toBe(200);
    const graced = await (await gateway.json(`/admin/v1/keys/${id}/rotate`, { grace_s: 3600 })).json();
    expect((await gateway.call("/v1/models", { key: rotated.key })).status).toBe(200);
    expect((await gateway.call("/v1/models", { key: graced.key })).status).toBe(200);
  });
});

describe("the admin API", () => {
  test("lists env keys read-only beside runtime keys, never a secret; changing an env key is a 403 naming where it is set", async () => {
    const { data } = await (await gateway.call("/admin/v1/keys")).json();
    expect(data.slice(0, 2)).toEqual([
      { id: null, source: "env", name: "main", scopes: expect.arrayContaining(["chat", "admin"]), set_in: "API_KEY" },
      { id: null, source: "env", name: "reader", scopes: ["usage"], set_in: "API_KEYS" },
    ]);
    const text = JSON.stringify(data);
    expect(text).not.toContain(TEST_KEY);
    expect(text).not.toMatch(/pk-[A-Za-z0-9]{40}/);
    const patched = await gateway.call("/admin/v1/keys/main", { method: "PATCH", body: JSON.stringify({ rpm: 5 }) });
    expect(patched.status).toBe(403);
    expect((await patched.json()).error.message).toContain("API_KEY");
    expect((await gateway.call("/admin/v1/keys/reader", { method: "DELETE" })).status).toBe(403);
  });

  test("a name already used, by an env key or a runtime key, is a 422 naming name", async () => {
    await made({ name: "taken" });
    for (const name of ["taken", "main", "reader"]) {
      const answer = await gateway.json("/admin/v1/keys", { name });
      expect(answer.status).toBe(422);
      expect((await answer.json()).error.details).toStartWith("name:");
    }
  });

  test("keys, the audit log and changes take admin; the reads take admin or usage; other keys get 403", async () => {
    const reader = { key: null, headers: { authorization: "Bearer sk-usage-reader-0000001" } };
    expect((await gateway.call("/admin/v1/upstreams", reader)).status).toBe(200);
    expect((await gateway.call("/admin/v1/routes", reader)).status).toBe(200);
    expect((await gateway.call("/admin/v1/config", reader)).status).toBe(200);
    for (const path of ["/admin/v1/keys", "/admin/v1/audit"]) {
      const refused = await gateway.call(path, reader);
      expect(refused.status).toBe(403);
      expect((await refused.json()).error.message).toContain("'admin'");
    }
    const { key } = await made({ name: "plain-chat" });
    expect((await gateway.call("/admin/v1/upstreams", { key })).status).toBe(403);
    // An API_KEYS entry given the admin scope manages keys, and is the audit log's actor.
    const ops = await gateway.json("/admin/v1/keys", { name: "made-by-ops" }, { key: "sk-ops-admin-key-000001" });
    expect(ops.status).toBe(201);
    expect((await (await gateway.call("/admin/v1/audit?limit=1")).json()).data[0]).toMatchObject({ actor: "ops", action: "key.create" });
    expect((await gateway.call("/admin/v1/upstreams", { key: null })).status).toBe(401);
  });

  test("the audit log holds every change: when, which key's label, what, never a secret", async () => {
    const { id, key } = await made({ name: "audited", rpm: 7 });
    await gateway.call(`/admin/v1/keys/${id}`, { method: "PATCH", body: JSON.stringify({ rpm: 8 }) });
    const rotated = await (await gateway.json(`/admin/v1/keys/${id}/rotate`, { grace_s: 60 })).json();
    await gateway.call(`/admin/v1/keys/${id}`, { method: "DELETE" });
    const { data } = await (await gateway.call("/admin/v1/audit?limit=4")).json();
    expect(data.map((e: { action: string }) => e.action)).toEqual(["key.revoke", "key.rotate", "key.update", "key.create"]);
    for (const entry of data) expect(entry).toMatchObject({ actor: "main", target: id, time: expect.any(Number) });
    const text = JSON.stringify(data);
    expect(text).not.toContain(key);
    expect(text).not.toContain(rotated.key);
  });

  test("no CORS on /admin/v1: no headers, no preflight", async () => {
    const answer = await gateway.call("/admin/v1/keys", { headers: { origin: "https://evil.example" } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await gateway.call("/admin/v1/keys", { method: "OPTIONS", key: null, headers: { origin: "https://evil.example", "access-control-request-method": "POST" } });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    expect((await gateway.call("/v1/models", { headers: { origin: "https://evil.example" } })).headers.get("access-control-allow-origin")).toBe("https://evil.example");
  });

  test("upstreams, routes, config (secrets masked, with their source) and explain", async () => {
    await gateway.json("/v1/chat/completions", { model: MODEL, messages: HI });
    const upstreams = (await (await gateway.call("/admin/v1/upstreams")).json()).data as Record<string, any>[];
    const alpha = upstreams.find((u) => u.name === "alpha")!;
    expect(alpha).toMatchObject({ kind: "openai", status: "available", cooldown_until: null });
    expect(alpha.last_5m.requests).toBeGreaterThan(0);
    expect(alpha.last_5m.p95_ms).toBeGreaterThanOrEqual(alpha.last_5m.p50_ms);
    expect(alpha.last_5m.error_rate).toBe(0);
    const config = (await (await gateway.call("/admin/v1/config")).json()).data as { key: string; value: string | null; source: string | null }[];
    const text = JSON.stringify(config);
    expect(text).not.toContain(TEST_KEY);
    expect(text).not.toContain("sk-upstream-openai-key");
    expect(config.find((e) => e.key === "ALPHA_API_KEY")).toMatchObject({ source: "env" });
    const explained = await (await gateway.json("/admin/v1/routes/explain", { model: MODEL, endpoint: "/v1/messages" })).json();
    expect(explained.explanation).toContain("alpha");
    expect((await gateway.call("/admin/v1/routes")).status).toBe(200);
  });

  test("an upstream's test: one short chat straight to it, audited; an unknown name is a 404", async () => {
    gateway.reset();
    const tested = await (await gateway.call("/admin/v1/upstreams/alpha/test?model=gpt-4o-mini", { method: "POST" })).json();
    expect(tested).toMatchObject({ ok: true, upstream: "alpha", model: "gpt-4o-mini", latency_ms: expect.any(Number) });
    expect(gateway.openai.received).toHaveLength(1);
    gateway.openai.next({ kind: "error", status: 401, message: "bad key" });
    const failed = await (await gateway.call("/admin/v1/upstreams/alpha/test?model=gpt-4o-mini", { method: "POST" })).json();
    expect(failed).toMatchObject({ ok: false, upstream: "alpha" });
    expect(JSON.stringify(failed)).not.toContain("sk-upstream-openai-key");
    expect((await gateway.call("/admin/v1/upstreams/nowhere/test", { method: "POST" })).status).toBe(404);
    const { data } = await (await gateway.call("/admin/v1/audit?limit=1")).json();
    expect(data[0]).toMatchObject({ action: "upstream.test", target: "alpha", detail: { ok: false } });
  });
});
