/**
 * What Claude Code's gateway guide requires (contract 26): upstream errors unmodified on
 * same-family paths (Claude Code's recovery matches their words), no error of parley's after the
 * upstream's own, its headers forwarded, and a beta Bedrock does not take never dropped silently.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { startClaudeGateway } from "../lib/claude-gateway.ts";
import { messageEvents } from "../lib/fake-anthropic.ts";
import { readSse } from "../lib/gateway.ts";

const gateway = await startClaudeGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0", UPSTREAM_COOLDOWN_S: "0" });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

// Pinned to one upstream: a retryable error would otherwise go on to the next (claude-* to Bedrock).
const SONNET = "anthropic/claude-sonnet-4-5-20250929";
const ON_BEDROCK = "bedrock-us/us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const CLAUDE_CODE = { "anthropic-version": "2023-06-01", "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14", "x-claude-code-session-id": "5f0c1d2e-aaaa-bbbb-cccc-0123456789ab" };
const messages = (model: string, stream = false, headers: Record<string, string> = CLAUDE_CODE) =>
  gateway.json("/v1/messages", { model, max_tokens: 64, stream, messages: [{ role: "user", content: "Hello" }] }, { headers });
const invoke = (model: string, action = "invoke") =>
  gateway.json(`/model/${encodeURIComponent(model)}/${action}`, { anthropic_version: "bedrock-2023-05-31", max_tokens: 64, messages: [{ role: "user", content: "Hello" }] });

describe("Anthropic upstream: errors as sent", () => {
  test("a 403 permission_error reaches the client as Anthropic wrote it", async () => {
    const words = "Your organization does not have access to claude-sonnet-4-5-20250929.";
    gateway.anthropic.next({ kind: "error", status: 403, type: "permission_error", message: words });
    const response = await messages(SONNET);
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ type: "error", error: { type: "permission_error", message: words } });
  });

  test("a 529 and a 429 keep their status, type and words; the 429 its retry-after", async () => {
    gateway.anthropic.overloaded();
    const overloaded = await messages(SONNET);
    expect([overloaded.status, (await overloaded.json()).error]).toEqual([529, { type: "overloaded_error", message: "Overloaded" }]);
    gateway.anthropic.rateLimited(1, "7");
    const limited = await messages(SONNET);
    expect([limited.status, limited.headers.get("retry-after")]).toEqual([429, "7"]);
    expect((await limited.json()).error).toEqual({ type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit" });
  });

  test("a 401 (parley's own key refused) is a 502 naming the upstream", async () => {
    gateway.anthropic.next({ kind: "error", status: 401, type: "authentication_error", message: "invalid x-api-key" });
    const response = await messages(SONNET);
    expect(response.status).toBe(502);
    expect((await response.json()).error.message).toContain("Anthropic upstream 'anthropic'");
  });

  test("after the upstream's own error event the stream ends: no second error", async () => {
    gateway.anthropic.next({ kind: "stream", events: messageEvents(SONNET), errorAfter: 4 });
    const events = await readSse(await messages(SONNET, true));
    expect(events.filter((e) => e.event === "error")).toEqual([{ event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }]);
    expect(events.at(-1)!.event).toBe("error");
  });

  test("anthropic-version, anthropic-beta and X-Claude-Code-Session-Id reach Anthropic as sent", async () => {
    const headers = { ...CLAUDE_CODE, "anthropic-version": "2023-01-01" };
    expect((await messages(SONNET, false, headers)).status).toBe(200);
    const sent = gateway.anthropic.received.at(-1)!.headers;
    expect([sent.get("anthropic-version"), sent.get("anthropic-beta"), sent.get("x-claude-code-session-id")]).toEqual([headers["anthropic-version"], headers["anthropic-beta"], headers["x-claude-code-session-id"]]);
  });
});

describe("Bedrock upstream: errors as sent", () => {
  const denied = "You don't have access to the model with the specified model ID.";
  test("an AccessDeniedException for a model is a 403 in Bedrock's words, to a Messages client and to a Bedrock client", async () => {
    gateway.bedrock.next({ kind: "error", status: 403, type: "AccessDeniedException", message: denied });
    const response = await messages(ON_BEDROCK);
    expect(response.status).toBe(403);
    expect((await response.json()).error).toEqual({ type: "permission_error", message: denied });

    gateway.bedrock.next({ kind: "error", status: 403, type: "AccessDeniedException", message: denied });
    const native = await invoke(ON_BEDROCK);
    expect([native.status, native.headers.get("x-amzn-errortype")?.split(":")[0], (await native.json()).message]).toEqual([403, "AccessDeniedException", denied]);
  });

  test("a refusal of parley's own credentials is a 502 naming what to check", async () => {
    for (const type of ["UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException"]) {
      gateway.bedrock.next({ kind: "error", status: 403, type, message: "The security token included in the request is invalid." });
      const response = await messages(ON_BEDROCK);
      expect(response.status).toBe(502);
      expect((await response.json()).error.message).toContain("rejected parley's credentials");
    }
  });

  test("a ThrottlingException keeps Bedrock's words, to a Messages client and to a Bedrock client", async () => {
    const words = "Too many requests, please wait before trying again.";
    gateway.bedrock.next({ kind: "error", status: 429, type: "ThrottlingException", message: words });
    const response = await messages(ON_BEDROCK);
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await response.json()).error).toEqual({ type: "rate_limit_error", message: words });

    gateway.bedrock.next({ kind: "error", status: 429, type: "ThrottlingException", message: words });
    const native = await invoke(ON_BEDROCK);
    expect([native.status, native.headers.get("x-amzn-errortype")?.split(":")[0], (await native.json()).message]).toEqual([429, "ThrottlingException", words]);
  });
});

describe("betas Bedrock does not take", () => {
  test("are left out, logged and counted in /metrics by upstream and name", async () => {
    const scrape = async () => {
      const text = await (await gateway.call("/metrics")).text();
      const family = parsePrometheusTextFormat(text).find((f) => f.name === "parley_betas_dropped_total");
      return (beta: string) => Number(family?.metrics.find((m) => m.labels?.beta === beta)?.value ?? 0);
    };
    const before = await scrape();
    expect((await messages(ON_BEDROCK)).status).toBe(200);
    expect(gateway.bedrock.last().body.anthropic_beta).toEqual(["interleaved-thinking-2025-05-14"]);
    const after = await scrape();
    expect(after("claude-code-20250219")).toBe(before("claude-code-20250219") + 1);
    expect(after("interleaved-thinking-2025-05-14")).toBe(0);
  });
});
