import { GatewayError } from "../errors.ts";

/** Wrong or missing keys allowed from one socket address in a sliding window (contract 25). */
export const FAILED_KEYS_ALLOWED = 20;
const WINDOW_MS = 60_000;
/** Addresses remembered at most: the oldest is forgotten first, so that a flood of addresses cannot grow memory. */
const ADDRESSES = 10_000;

/**
 * Counts requests with a wrong or missing key per socket address (never X-Forwarded-For, which the
 * client writes). Past the allowance in the last 60 s such a request is answered 429 with
 * Retry-After instead of 401. A request with a valid key never comes here: it is never throttled.
 * Per process: each worker counts its own connections.
 */
export function createFailedKeys(now = () => Date.now()) {
  const seen = new Map<string, number[]>();
  return {
    /** Notes one failure; the 429 to answer instead of the 401 once the address is over its allowance. */
    failed(address: string): GatewayError | undefined {
      const at = now();
      let times = seen.get(address);
      if (times) seen.delete(address); // re-inserted below: the map's order is by last failure
      else times = [];
      while (times.length > 0 && times[0]! <= at - WINDOW_MS) times.shift();
      times.push(at);
      if (times.length > FAILED_KEYS_ALLOWED + 1) times.shift();
      seen.set(address, times);
      if (seen.size > ADDRESSES) seen.delete(seen.keys().next().value!);
      if (times.length <= FAILED_KEYS_ALLOWED) return undefined;
      const seconds = Math.max(1, Math.ceil((times[0]! + WINDOW_MS - at) / 1000));
      return new GatewayError(429, "rate_limit_error", `Too many requests with a wrong or missing key from this address (more than ${FAILED_KEYS_ALLOWED} in 60 s).`, {
        details: `retry after ${seconds} seconds`,
        headers: { "retry-after": String(seconds) },
      });
    },
  };
}
