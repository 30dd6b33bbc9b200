/** One completion, as contract 12 has it. Never content, never the key itself. */
export interface UsageRecord {
  /** parley's own id for the request: what makes a write idempotent (unique across gateways). */
  id: string;
  /** The client's X-Request-Id, if it sent one: recorded, never used as the key. */
  request_id: string | null;
  /** Unix milliseconds when the request came in. */
  time: number;
  endpoint: string;
  key_label: string;
  model_requested: string | null;
  /** The model that answered (after aliases and fallbacks), else the one asked for. */
  model: string | null;
  provider: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  cost_usd: number | null;
  status: number;
  /** ok, error (no answer), broken (the upstream's stream failed) or cancelled (the client left). */
  outcome: "ok" | "error" | "broken" | "cancelled";
  latency_ms: number;
  ttft_ms: number | null;
  attempts: number;
  tag: string | null;
  /** The `[[routes]]` entry that routed it (its name, else its place); null when none did. */
  route: string | null;
  /** The session (contract 22), hashed: the first 16 hex digits of its SHA-256; null when it named none. */
  session: string | null;
}

export const COLUMNS = [
  "id", "request_id", "time", "endpoint", "key_label", "model_requested", "model", "provider", "input_tokens", "output_tokens", "cache_read_tokens",
  "cache_write_tokens", "cost_usd", "status", "outcome", "latency_ms", "ttft_ms", "attempts", "tag", "route", "session",
] as const satisfies readonly (keyof UsageRecord)[];

/** Adds a record's values in COLUMNS' order, field by field: 3x faster than a loop over the names (a keyed read each). */
export const pushRow = (list: unknown[], r: UsageRecord) => list.push(
  r.id, r.request_id, r.time, r.endpoint, r.key_label, r.model_requested, r.model, r.provider, r.input_tokens, r.output_tokens, r.cache_read_tokens,
  r.cache_write_tokens, r.cost_usd, r.status, r.outcome, r.latency_ms, r.ttft_ms, r.attempts, r.tag, r.route, r.session,
);

/** A session as records keep it: never the id itself (a Claude Code session id is a secret of sorts). */
export const hashSession = (session: string) => new Bun.CryptoHasher("sha256").update(session).digest("hex").slice(0, 16);
