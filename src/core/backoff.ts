import type { GatewayError } from "../errors.ts";

/** Contract 10: exponential backoff with full jitter, 250 ms base, 8 s cap; Retry-After up to the cap. */
const BASE_MS = 250;
const CAP_MS = 8000;

/**
 * A Retry-After longer than the cap: that target (a model on an upstream) is spent at once. The
 * client is better served by the next target or model, or by the 429 and its Retry-After now,
 * than by a retry it was told would fail.
 */
export const waitsTooLong = (error: GatewayError) => (error.retryAfter ?? 0) * 1000 > CAP_MS;

/** How long to wait before retry number `n` (1, 2, …) after `error`. */
export function backoff(n: number, error: GatewayError): number {
  const jitter = Math.random() * Math.min(CAP_MS, BASE_MS * 2 ** (n - 1));
  return Math.min(CAP_MS, Math.max(jitter, (error.retryAfter ?? 0) * 1000));
}

/** A wait that ends at once, with the abort, when the client leaves. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
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
