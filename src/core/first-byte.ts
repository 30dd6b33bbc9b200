import { timedOut } from "../wire/upstream-errors.ts";

/**
 * The upstream call, or a 504 when its first byte takes longer than `ms`. Providers pass the same
 * `ms` to fetch as its idle timeout, so an abandoned call's socket is closed by Bun; `abandon`
 * releases what a late answer brings. A timer per call, not an AbortController per call: giving
 * fetch a signal of our own cost every request measurably. (One coarse timer sweeping a set of
 * waiting calls was tried too: in Bun it cost more than a timer per call.)
 */
export function firstByte<T>(upstreamCall: Promise<T>, ms: number, name: string, abandon?: (late: T) => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      upstreamCall.then(abandon, () => {});
      reject(timedOut(name, ms));
    }, ms);
    upstreamCall.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
