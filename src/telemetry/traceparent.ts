/** W3C Trace Context `traceparent`: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`. */

export interface SpanContext {
  traceId: string;
  spanId: string;
  /** Trace flags; bit 0 is "sampled". */
  flags: number;
}

const HEADER = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/**
 * The parent a client sent, or null when absent or invalid (then the trace starts here, as the
 * specification asks). Versions above 00 are read by their first four fields; version ff is invalid.
 */
export function parseTraceparent(header: string | null | undefined): SpanContext | null {
  if (!header || header.length < 55) return null;
  const m = HEADER.exec(header.trim());
  if (!m) return null;
  const [, version, traceId, spanId, flags, rest] = m as unknown as [string, string, string, string, string, string | undefined];
  if (version === "ff" || (version === "00" && rest !== undefined)) return null;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null;
  return { traceId, spanId, flags: Number.parseInt(flags, 16) };
}

export function formatTraceparent(ctx: SpanContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${(ctx.flags & 0xff).toString(16).padStart(2, "0")}`;
}

// One call to the random source per 512 ids rather than one per id.
const pool = Buffer.alloc(4096);
let used = pool.length;

/**
 * `bytes` random bytes as lower-case hex, never all zeros. Written by Buffer's native hex encoder:
 * one flat string (a string built by `+=` is a rope of one piece per byte), about 3x faster.
 */
export function randomHex(bytes: 8 | 16): string {
  for (;;) {
    if (used + bytes > pool.length) {
      crypto.getRandomValues(pool);
      used = 0;
    }
    const start = used;
    used += bytes;
    for (let i = start; i < used; i++) if (pool[i]) return pool.toString("hex", start, used);
  }
}
