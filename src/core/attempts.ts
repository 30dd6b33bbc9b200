import { GatewayError } from "../errors.ts";

/** Contract 10: exponential backoff with full jitter, 250 ms base, 8 s cap; Retry-After up to the cap. */
const BASE_MS = 250;
const CAP_MS = 8000;

/**
 * What follows a first call that failed with `failed` (the caller makes the first call itself:
 * most succeed, and need no loop). Makes each call `tries` gives while the last failed with a
 * retryable error, waiting first when a call goes again to an upstream already tried. A target
 * (a model on an upstream) that asks for a wait longer than the cap is spent at once: the client is better served by the
 * next target or model, or by the 429 and its Retry-After now, than by a retry it was told would
 * fail. Any other error, or the client leaving, ends it at once; when the tries are spent, the
 * last error stands.
 */
export async function inTurn<T, K extends { again: boolean; target: { upstream: string; model: string } }>(
  tries: Iterable<K>,
  signal: AbortSignal,
  attempt: (next: K) => Promise<T>,
  first: K,
  failed: unknown,
  /** Told before each call after the first: how long it waits, and the error it follows. */
  onRetry?: (waitMs: number, after: GatewayError) => void,
): Promise<T> {
  let last = stopUnlessRetryable(failed, signal);
  let n = 0;
  const spent = new Set<string>();
  let previous = first;
  for (const next of tries) {
    if (waitsTooLong(last)) spent.add(keyOf(previous));
    if (spent.size && spent.has(keyOf(next))) continue;
    previous = next;
    const wait = next.again ? backoff(++n, last) : 0;
    onRetry?.(wait, last);
    if (next.again) await pause(wait, signal);
    try {
      return await attempt(next);
    } catch (error) {
      last = stopUnlessRetryable(error, signal);
    }
  }
  throw last;
}

/** The error, when another call may succeed; thrown again when not. */
function stopUnlessRetryable(error: unknown, signal: AbortSignal): GatewayError {
  if (!(error instanceof GatewayError) || !error.retryable || signal.aborted) throw error;
  return error;
}

/** A target as a Retry-After spends it: one model on one upstream (made only after a failure). */
const keyOf = ({ target }: { target: { upstream: string; model: string } }) => `${target.upstream} ${target.model}`;

const waitsTooLong = (error: GatewayError) => (error.retryAfter ?? 0) * 1000 > CAP_MS;

/** How long to wait before retry number `n` (1, 2, …) after `error`. */
export function backoff(n: number, error: GatewayError): number {
  const jitter = Math.random() * Math.min(CAP_MS, BASE_MS * 2 ** (n - 1));
  return Math.min(CAP_MS, Math.max(jitter, (error.retryAfter ?? 0) * 1000));
}

/** A wait that ends at once, with the abort, when the client leaves. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const done = () => {
      signal.removeEventListener("abort", abort);
      resolve();
    };
    const abort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", abort, { once: true });
  });
}
