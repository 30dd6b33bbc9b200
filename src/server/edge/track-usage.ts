import type { ChatCall, ChatOutcome } from "../../core/chat.ts";
import { clip } from "../../log.ts";
import { uncachedInput, type Usage } from "../../ir.ts";
import type { Guard, Principal, RequestAccess } from "../auth.ts";
import type { RequestLog } from "../request-log.ts";
import { costOf, FREE, type Tokens } from "../../usage/prices.ts";
import { hashSession, nextUsageId, type UsageRecord } from "../../usage/recorder.ts";
import type { UsageService } from "../../usage/service.ts";
import { ATTR, NOOP_SPAN, type Span } from "../../telemetry/index.ts";

/** What a chat route knows about its request. */
export interface TrackContext {
  /** The request's log line, absent below LOG_LEVEL=info. */
  log?: RequestLog;
  request: Request;
  principal: Principal;
  /** The request's SERVER span: ended with the record, its usage and cost on it. */
  span?: Span;
  /** The key's restrictions and budget hold, settled when the call is over. */
  access?: RequestAccess;
  /** Tokens per minute, counted when the call is over. */
  tpm?: Guard["tpm"];
}

type Observed = Parameters<NonNullable<ChatCall["observe"]>>[0];

export const COST_HEADER = "x-parley-cost-usd";

/**
 * One chat call's usage: the hooks go into `chat()`, and its promise goes through `answered` and
 * `failed`. A route needs two lines:
 *
 *   const usage = trackUsage(service, context, "/v1/messages");
 *   const outcome = await chat({ ...call, ...usage.hooks }).then(usage.answered, usage.failed);
 *
 * The record is made once the completion is over: a JSON reply at once (with its cost in
 * `x-parley-cost-usd`), a stream when it ends; its metrics and its row are counted after the
 * answer has been written (`later`). chat() calls `onDone` before `observe` for JSON and
 * after for a stream, so whichever of `onDone` and `answered` comes last finishes the record.
 */
export function trackUsage(service: UsageService | undefined, { log, request, principal, access, tpm, span = NOOP_SPAN }: TrackContext, endpoint: string) {
  const time = Date.now();
  const start = performance.now();
  let observed: (Observed & { at: number }) | undefined;
  let done: { usage?: Usage; ok: boolean } | undefined;
  let answer: { model?: string; stream: boolean; headers: Record<string, string> } | undefined;
  let broken = false;
  let finished = false;
  span.set(ATTR.key, principal.label);

  const hooks: Pick<ChatCall, "observe" | "onDone" | "onBreak"> = {
    observe(info) {
      log?.note(info);
      observed = { ...info, model: clip(info.model), at: performance.now() };
    },
    onBreak(reason) {
      log?.note({ broken: reason });
      span.fail("_OTHER", reason);
      broken = true;
    },
    onDone(result) {
      done = result;
      if (answer) finish(200);
    },
  };

  function finish(status: number): void {
    if (finished) return;
    finished = true;
    if (!service) {
      void access?.settle(observed?.model ?? "-", null);
      return endSpan(null);
    }
    const stream = answer?.stream ?? false;
    const outcome: UsageRecord["outcome"] = status === 499 ? "cancelled" : status !== 200 ? "error" : done?.ok === false ? (broken ? "broken" : "cancelled") : "ok";
    const provider = observed?.provider ?? null;
    // The model that answered: as its reply names it (a local server answers gpt-4o with its own model), else the id sent upstream.
    const answered = done?.usage?.model ?? answer?.model;
    const model = answered !== undefined ? clip(answered) : (observed?.model ?? null);
    const tokens = done?.usage && billed(done.usage);
    // Priced as the model that answered, not the one asked for: one without a price costs null.
    const price = observed?.free ? FREE : answered !== undefined ? service.prices(answered) : undefined;
    const cost = tokens ? costOf(price, tokens) : null;
    if (answer && !stream && cost !== null) answer.headers[COST_HEADER] = String(Math.round(cost * 1e10) / 1e10);
    endSpan(cost);
    const all = tokens ? tokens.input + tokens.output + tokens.cacheRead + tokens.cacheWrite : 0;
    if (tokens && principal.budget) service.budgets?.spend(principal.label, principal.budget, all, cost);
    // A hold is settled with what the call cost (none: released), at the price the record uses.
    if (access) void access.settle(model ?? "-", tokens ?? null, price)?.catch(() => undefined);
    if (all > 0 && principal.key.tpm !== null) tpm?.add(principal.key, all);
    if (!service.metrics && !service.recorder) return;
    const latency = Math.round(performance.now() - start);
    service.later(() => {
      metrics(status, provider ?? "-", model ?? "-", tokens, cost, stream);
      if (!observed || !service.recorder) return;
      service.recorder.add({
        id: nextUsageId(), request_id: request.headers.get("x-request-id")?.slice(0, 128) ?? null, time, endpoint, key_label: principal.label, model_requested: observed.model, model, provider,
        input_tokens: tokens?.input ?? null, output_tokens: tokens?.output ?? null,
        cache_read_tokens: tokens ? tokens.cacheRead : null, cache_write_tokens: tokens ? tokens.cacheWrite : null,
        cost_usd: cost, status, outcome, latency_ms: latency,
        ttft_ms: stream ? Math.round(observed.at - start) : null, attempts: observed.attempts, tag: tagOf(request),
        route: observed.route ?? null, session: sessionIn(observed),
      });
    });
  }

  function endSpan(cost: number | null): void {
    if (span === NOOP_SPAN) return;
    if (cost !== null) span.set(ATTR.costUsd, cost);
    // Hashed, as the usage record keeps it: a session id is never exported as sent.
    if (observed) span.set(ATTR.session, sessionIn(observed));
    if (done?.usage) span.usage(done.usage);
    span.end();
  }

  function metrics(status: number, provider: string, model: string, tokens: Tokens | undefined, cost: number | null, stream: boolean) {
    const m = service?.metrics;
    if (!m) return;
    const cells = m.answer(endpoint, status, provider, model);
    cells.requests.value++;
    if (stream) m.streams.inc([endpoint], -1);
    if (tokens) {
      cells.input.value += tokens.input;
      cells.output.value += tokens.output;
      cells.cacheRead.value += tokens.cacheRead;
      cells.cacheWrite.value += tokens.cacheWrite;
    }
    if (cost) cells.cost.value += cost;
    if (!observed) return;
    if (tokens && (tokens.cacheRead || tokens.cacheWrite)) m.cache(provider, observed.route ?? "", tokens.cacheRead, tokens.cacheWrite);
    if (observed.attempts > 1) cells.retries.value += observed.attempts - 1;
    if (observed.upstream_ms !== undefined) {
      cells.firstByte.observe(observed.upstream_ms / 1000);
      cells.added.observe(Math.max(0, observed.at - start - observed.upstream_ms) / 1000);
    }
  }

  return {
    hooks,
    /** The call answered: a JSON reply is recorded now, a stream when it ends. */
    answered(outcome: ChatOutcome): ChatOutcome {
      const stream = outcome.kind === "stream" || outcome.kind === "events";
      answer = { model: outcome.headers["x-parley-model"], stream, headers: outcome.headers };
      span.firstToken();
      if (stream) service?.metrics?.streams.inc([endpoint]);
      if (!stream || done) finish(200);
      return outcome;
    },
    /** The call failed: recorded with the error's status (499: the client left), and the error goes on. */
    failed(error: unknown): never {
      const status = (error as { status?: unknown }).status;
      const type = (error as { type?: unknown }).type;
      if (!request.signal.aborted) span.fail(typeof type === "string" ? type : "_OTHER", error instanceof Error ? error.message : undefined);
      finish(request.signal.aborted ? 499 : typeof status === "number" ? status : 500);
      throw error;
    },
  };
}

/** The request's session, hashed: read only now that a record is written. */
function sessionIn(observed: Observed): string | null {
  const session = observed.session?.();
  return session === undefined ? null : hashSession(session);
}

/** Tokens as billed: the record keeps the input without the cache, and the cache's reads and writes beside it. */
const billed = ({ input, output }: Usage): Tokens => ({ input: uncachedInput(input), output, cacheRead: input.cacheRead, cacheWrite: input.cacheWrite });

/** The client's tag: `x-parley-tag` alone (a session id is kept hashed, as the session: contract 22). */
function tagOf(request: Request): string | null {
  const tag = request.headers.get("x-parley-tag");
  return tag ? tag.slice(0, 128) : null;
}
