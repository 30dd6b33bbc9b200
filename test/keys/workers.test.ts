/**
 * Keys and budgets across the worker processes of one `parley serve --workers 2` (contract 19):
 * a key made on one worker is in force on the other at its next request; concurrent slow requests
 * cannot outrun a small budget; the events stream and the upstreams' figures cover every worker.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startCli, userDir } from "../lib/cli.ts";
import { freePort } from "../lib/proc.ts";

const ADMIN = "sk-admin-workers-0123456789";
const SLOW_MS = 1500;
/** What the slow upstream bills each answer: 5 in, 20 out. */
const PER_CALL = 25;
const BUDGET = 100;

/** An OpenAI-compatible upstream that answers every chat after SLOW_MS, and counts what it was asked. */
function slowUpstream() {
  let received = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = (await request.json()) as { model: string };
      received++;
      await Bun.sleep(SLOW_MS);
      return Response.json({
        id: "chatcmpl-slow", object: "chat.completion", created: 1, model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content: "slowly" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 5, completion_tokens: 20, total_tokens: PER_CALL },
      });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, received: () => received, stop: () => server.stop(true) };
}

const upstream = slowUpstream();
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const user = userDir();
let server: Awaited<ReturnType<typeof startCli>>;
beforeAll(async () => {
  server = await startCli(["--workers", "2", "--port", String(port)], {
    cwd: user.dir,
    env: { ...user.env, API_KEY: ADMIN, ALPHA_API_KEY: "sk-upstream-slow", ALPHA_BASE_URL: upstream.url, RATE_LIMIT_RPM: "0", MODELS_REFRESH_S: "0" },
  });
  await server.waitFor(/worker 1.*listening on[\s\S]*worker 2.*listening on|worker 2.*listening on[\s\S]*worker 1.*listening on/);
});
afterAll(async () => {
  await server?.stop();
  upstream.stop();
});

/** A fresh connection each time, so the kernel spreads the requests over both workers. */
const send = (path: string, key: string, init: RequestInit = {}) =>
  fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", connection: "close", ...(init.headers as Record<string, string>) } });
const chat = (key: string) => send("/v1/chat/completions", key, { method: "POST", body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });

/**
 * Sends requests (8 at a time, fresh connections) until each worker's log shows one answered with
 * `status` (the kernel picks the worker); every answer must have that status.
 */
async function onBothWorkers(request: () => Promise<Response>, status: number) {
  const from = server.output().length;
  const seen = (worker: number) => new RegExp(`\\[worker ${worker}\\][^\\n]*/v1/models ${status} `).test(server.output().slice(from));
  const deadline = Date.now() + 30_000;
  while (!(seen(1) && seen(2))) {
    if (Date.now() > deadline) throw new Error(`not answered ${status} by both workers: ${server.output().slice(from)}`);
    const answers = await Promise.all(Array.from({ length: 8 }, request));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(status));
    // Request lines are written in batches, a moment after the responses.
    await Bun.sleep(50);
  }
}

/** Reads `request` events from the admin events stream until `count` have come or the deadline passes. */
async function events(count: number, ms = 30_000): Promise<{ status: number; key_label: string }[]> {
  const response = await send("/admin/v1/events", ADMIN);
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  const reader = response.body!.getReader();
  const seen: { status: number; key_label: string }[] = [];
  const deadline = setTimeout(() => void reader.cancel(), ms);
  let text = "";
  try {
    while (seen.length < count) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += new TextDecoder().decode(chunk.value);
      const blocks = text.split("\n\n");
      text = blocks.pop()!;
      for (const block of blocks) if (block.startsWith("event: request\n")) seen.push(JSON.parse(block.slice(block.indexOf("data: ") + 6)));
    }
  } finally {
    clearTimeout(deadline);
    // Not awaited: a cancelled body settles only at the next chunk (the ping, 15 s on).
    void reader.cancel().catch(() => undefined);
  }
  return seen;
}

describe("keys with WORKERS=2", () => {
  test("concurrent slow requests cannot outrun a small budget: spend stays within it, the rest get 429 naming it", async () => {
    const made = await send("/admin/v1/keys", ADMIN, { method: "POST", body: JSON.stringify({ name: "ci", budget: { tokens: BUDGET, period: "day" } }) });
    expect(made.status).toBe(201);
    const { id, key } = (await made.json()) as { id: string; key: string };

    const watching = events(12);
    // Twelve at once, each answered only after SLOW_MS: all of them are in flight together.
    const answers = await Promise.all(Array.from({ length: 12 }, () => chat(key)));
    const statuses = answers.map((a) => a.status);
    const ok = statuses.filter((s) => s === 200).length;
    expect(ok).toBeGreaterThan(0);
    expect(ok * PER_CALL).toBeLessThanOrEqual(BUDGET);
    expect(statuses.filter((s) => s === 429)).toHaveLength(12 - ok);
    const refused = await answers.find((a) => a.status === 429)!.json();
    expect(refused.error.message).toContain("Budget of key 'ci' (100 tokens a day)");
    expect(answers.find((a) => a.status === 429)!.headers.get("retry-after")).toMatch(/^\d+$/);
    // A refused request never reached the upstream.
    expect(upstream.received()).toBe(ok);

    // Settled with what the calls cost; nothing is held any more.
    const record = await (await send(`/admin/v1/keys/${id}`, ADMIN)).json();
    expect(record.spend).toMatchObject({ unit: "tokens", used: ok * PER_CALL, reserved: 0, limit: BUDGET });

    // Both workers served; the events stream (on one of them) saw every request of both.
    await server.waitFor(/\[worker 1\].*POST \/v1\/chat\/completions/);
    await server.waitFor(/\[worker 2\].*POST \/v1\/chat\/completions/);
    const seen = await watching;
    expect(seen.filter((e) => e.key_label === "ci")).toHaveLength(12);
    expect(seen.filter((e) => e.status === 200)).toHaveLength(ok);

    // The upstreams' figures count every worker's requests.
    const alpha = (await (await send("/admin/v1/upstreams", ADMIN)).json()).data.find((u: { name: string }) => u.name === "alpha");
    expect(alpha.last_5m.requests).toBeGreaterThanOrEqual(ok);
    expect(alpha.last_5m.p50_ms).toBeGreaterThanOrEqual(SLOW_MS);
  }, 60_000);

  test("a key made on one worker works on both at their next request; revoked, it is refused on both", async () => {
    const { id, key } = await (await send("/admin/v1/keys", ADMIN, { method: "POST", body: JSON.stringify({ name: "teammate" }) })).json();
    await onBothWorkers(() => send("/v1/models", key), 200);
    expect((await send(`/admin/v1/keys/${id}`, ADMIN, { method: "DELETE" })).status).toBe(200);
    await onBothWorkers(() => send("/v1/models", key), 401);
  }, 60_000);

  test("POST /admin/v1/reload reloads every worker, and the audit log says who asked", async () => {
    const reloaded = await send("/admin/v1/reload", ADMIN, { method: "POST" });
    expect(reloaded.status).toBe(200);
    expect(await reloaded.json()).toMatchObject({ reloaded: true });
    await server.waitFor(/\[worker 1\][^\n]*upstreams reloaded \(SIGHUP\)/);
    await server.waitFor(/\[worker 2\][^\n]*upstreams reloaded \(SIGHUP\)/);
    const audit = await (await send("/admin/v1/audit?limit=1", ADMIN)).json();
    expect(audit.data[0]).toMatchObject({ actor: "main", action: "reload", detail: { ok: true } });
  }, 60_000);
});
