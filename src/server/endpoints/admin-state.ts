import { mask, type Config, type Entry } from "../../config.ts";
import { invalidRequest, notFound, validationError } from "../../errors.ts";
import type { ChatRequest } from "../../ir.ts";
import { isObject } from "../../lib/read.ts";
import { shownUrl } from "../../providers/kind.ts";
import { KINDS } from "../../providers/kinds.ts";
import { loadTokenizer } from "../../routing/estimate.ts";
import { explain } from "../../routing/explain.ts";
import type { Live } from "../../routing/live.ts";
import type { Discovery } from "../../routing/discovery.ts";
import type { UpstreamLatency, UsageStore } from "../../usage/store.ts";
import type { Principal } from "../auth.ts";
import type { ChatEndpoint, PlainEndpoint } from "../edge/endpoint.ts";
import type { Keys } from "../keys.ts";

export interface StateDeps {
  config: Config;
  keys: Keys;
  upstreams: Live;
  discovery: Discovery;
  /** Where every worker (and every gateway sharing the database) writes its usage records. */
  store: UsageStore;
  /** Writes this process's usage records, so the figures include the last second's. */
  flush: () => Promise<void>;
  reload: () => { ok: boolean; message: string } | undefined;
  settings: () => Entry[];
  /** The endpoints that decode a chat, to explain a request as they would route it. */
  decoders: readonly ChatEndpoint[];
}

const WINDOW_MS = 5 * 60_000;
const QUESTION: ChatRequest = {
  system: [], messages: [{ role: "user", content: [{ type: "text", text: "Say hello in five words." }] }],
  maxTokens: 16, stream: false, includeUsage: false, fileIds: [],
};

/** The smallest body each endpoint takes: what is explained when the request gives no more (as `parley routes explain`). */
const MINIMAL: Record<string, Record<string, unknown>> = {
  "/v1/chat/completions": { messages: [{ role: "user", content: "hi" }] },
  "/v1/messages": { max_tokens: 1024, messages: [{ role: "user", content: "hi" }] },
  "/v1/responses": { input: "hi" },
  "/v1/completions": { prompt: "hi" },
};

/** Reads take `admin` or `usage` (contract 19); changes take `admin`. */
const READ = ["admin", "usage"] as const;

/**
 * What the gateway is doing (contract 19): its upstreams with their last 5 minutes (from the usage
 * records every worker writes to the one database, so the figures cover every worker, and every
 * gateway sharing it), the routes
 * and how a request would take them, the effective settings (secrets masked), a reload, and a
 * one-chat test of an upstream.
 */
export function adminState(deps: StateDeps): PlainEndpoint[] {
  const { upstreams } = deps;
  const base = { kind: "plain", errors: "parley", cors: false } as const;
  /** Each upstream's last minutes; undefined while the database cannot be read (the rest of the answer stands). */
  const lastMinutes = async (): Promise<Map<string, UpstreamLatency> | undefined> => {
    try {
      await deps.flush();
      const rows = await deps.store.upstreamLatencies(Date.now() - WINDOW_MS);
      return new Map(rows.map((row) => [row.provider, row]));
    } catch {
      return undefined;
    }
  };
  const audit = (principal: Principal | undefined, action: string, target: string | null, detail: Record<string, unknown>) =>
    deps.keys.store.addAudit(principal!.label, action, target, detail);

  return [
    {
      ...base, method: "GET", path: "/admin/v1/upstreams", scope: READ,
      async answer() {
        const figures = await lastMinutes();
        const listed = deps.discovery.list(() => undefined);
        const data = upstreams.current().declared.upstreams.map((u) => {
          const seen = figures?.get(u.name);
          const until = upstreams.cooldowns.until(u.name);
          return {
            name: u.name, kind: u.kind, where: shownUrl(KINDS[u.kind].where(u.settings)),
            status: upstreams.status(u.name),
            cooldown_until: until === undefined ? null : Math.ceil(until / 1000),
            models: listed.filter((m) => m.provider === u.name).map((m) => m.id),
            last_5m: figures
              ? { requests: seen?.requests ?? 0, p50_ms: seen?.p50_ms ?? null, p95_ms: seen?.p95_ms ?? null, error_rate: seen ? seen.errors / seen.requests : null }
              : null,
          };
        });
        return { object: "list", data };
      },
      openapi: { summary: "Upstreams: status, cooldown, models, p50/p95 latency and error rate over the last 5 minutes (every worker, every gateway sharing the database; null while the database cannot be read)", tags: ["admin"] },
    },
    {
      ...base, method: "GET", path: "/admin/v1/routes", scope: READ,
      answer() {
        const { declared } = upstreams.current();
        return { object: "list", data: declared.routes.map(({ line: _line, ...route }) => route), ...(declared.file ? { file: declared.file } : {}) };
      },
      openapi: { summary: "The routes of the upstreams file, in order", tags: ["admin"] },
    },
    {
      ...base, method: "POST", path: "/admin/v1/routes/explain", scope: READ, body: "json",
      async answer({ body, principal }) {
        const { model, endpoint = "/v1/chat/completions", headers = {}, ...rest } = body as Record<string, unknown>;
        if (typeof endpoint !== "string") throw validationError("endpoint", "a path such as /v1/messages");
        if (!isObject(headers) || !Object.values(headers).every((v) => typeof v === "string")) throw validationError("headers", "an object of header names to string values");
        const requested = typeof model === "string" ? model : deps.config.defaultModel;
        if (!requested) throw validationError("model", "required (no DEFAULT_ALPHA_MODEL is set)");
        const sent = new Headers(headers as Record<string, string>);
        const decoder = deps.decoders.find((e) => e.path === endpoint);
        const chatBody = { ...MINIMAL[endpoint], ...rest, model: requested };
        const request = decoder?.call(chatBody, new Request(`http://localhost${endpoint}`, { method: "POST", headers: sent }), "").input.decodeRequest(chatBody);
        const { router, declared } = upstreams.current();
        if (router.countsTokens) await loadTokenizer();
        const text = explain(
          { router, routes: declared.routes, modelAliases: deps.config.modelAliases, modelFallbacks: deps.config.modelFallbacks, ...(declared.file ? { file: declared.file } : {}) },
          requested, { request, endpoint, key: principal!.label, headers: sent },
        );
        return { model: requested, endpoint, explanation: text };
      },
      openapi: { summary: "Which route and targets a request would take, and why (nothing is sent)", tags: ["admin"], requestBody: { required: true, content: { "application/json": { schema: { type: "object", properties: { model: { type: "string" }, endpoint: { type: "string" }, headers: { type: "object" } } } } } } },
    },
    {
      ...base, method: "POST", path: "/admin/v1/reload", scope: "admin",
      async answer({ principal }) {
        const done = deps.reload();
        if (!done) throw invalidRequest("This server was started without a configuration to read again.");
        await audit(principal, "reload", null, { ok: done.ok, message: done.message });
        if (!done.ok) throw validationError("configuration", done.message);
        return { reloaded: true, changes: done.message };
      },
      openapi: { summary: "Read the configuration's upstreams and routes again and put them in force on every worker", tags: ["admin"] },
    },
    {
      ...base, method: "GET", path: "/admin/v1/config", scope: READ,
      answer() {
        const secrets = deps.settings();
        return {
          object: "list",
          data: secrets.map(({ key, value, source, secret }) => ({ key, value: value === undefined ? null : secret ? mask(value) : shownUrl(value), source: value === undefined ? null : source })),
        };
      },
      openapi: { summary: "The effective settings, each with its source; secrets masked", tags: ["admin"] },
    },
    {
      ...base, method: "POST", path: "/admin/v1/upstreams/:name/test", scope: "admin",
      async answer({ params, principal, query }) {
        const name = params[0]!;
        const upstream = upstreams.current().byName.get(name);
        if (!upstream) throw notFound(`No upstream is named '${name.slice(0, 100)}'.`);
        const requested = query.model ?? upstream.models?.[0] ?? deps.discovery.list(() => undefined).find((m) => m.provider === name)?.id;
        if (!requested) throw validationError("model", `the upstream '${name}' lists no model: give ?model=`);
        const model = KINDS[upstream.kind].modelFor?.(requested, upstream.settings) ?? requested;
        const started = performance.now();
        let result: Record<string, unknown>;
        try {
          const provider = await upstreams.current().providers(name);
          const reply = await provider.complete({ ...QUESTION, model }, model, AbortSignal.timeout(upstream.timeoutMs));
          const text = reply.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
          result = { ok: true, upstream: name, model, latency_ms: Math.round(performance.now() - started), finish: reply.finish.reason, text: text.slice(0, 200) };
        } catch (error) {
          const status = (error as { status?: unknown }).status;
          result = { ok: false, upstream: name, model, latency_ms: Math.round(performance.now() - started), status: typeof status === "number" ? status : null, error: (error as Error).message };
        }
        await audit(principal, "upstream.test", name, { ok: result.ok, model });
        return result;
      },
      openapi: { summary: "One short chat straight to one upstream (as parley upstreams test): status, latency, the first words", tags: ["admin"] },
    },
  ];
}
