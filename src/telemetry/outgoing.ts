/**
 * The trace headers of one upstream call, carried from the loop to the fetch without a parameter
 * through every provider: the loop runs each call inside `withTrace`, and every provider's fetch
 * (wrapped once, by the registry, in `traced`) adds what it finds. They ride with the request's
 * AbortSignal, which every provider already hands to its fetch, and a request's calls are made one
 * after another. Not an AsyncLocalStorage: in Bun, merely constructing one makes every promise of
 * the process carry an async context (measured: +7 µs CPU a request on the passthrough path).
 * With OpenTelemetry off and no `traceparent` from the client, a call costs one WeakMap lookup.
 */
import { ATTR } from "./names.ts";
import { NOOP_SPAN, type Span } from "./span.ts";

/** What a request's calls go out with: its SERVER span, and the client's own trace headers. */
export interface Trace {
  span: Span;
  /** The client's `traceparent` and `tracestate`, forwarded unchanged when OpenTelemetry is off. */
  traceparent?: string;
  tracestate?: string;
}

/** No span and no client headers: the calls go out as they always did. */
export const NO_TRACE: Trace = Object.freeze({ span: NOOP_SPAN });

interface Outgoing {
  traceparent: string;
  tracestate: string | undefined;
  /** The CLIENT span, told the address it called. */
  span: Span;
}

const outgoing = new WeakMap<AbortSignal, Outgoing>();

/**
 * Runs one upstream call, whose fetches with `signal` carry `attempt`'s `traceparent` (else the
 * client's). The next call of the request replaces the entry; it goes with the signal.
 */
export function withTrace<T>(trace: Trace, attempt: Span, signal: AbortSignal, call: () => T): T {
  const traceparent = attempt.traceparent ?? trace.traceparent;
  if (traceparent !== undefined) outgoing.set(signal, { traceparent, tracestate: trace.tracestate, span: attempt });
  return call();
}

type Fetch = (url: string, init: BunFetchRequestInit) => Promise<Response>;

/** A provider's fetch, sending the trace headers of the call it runs in. */
export function traced(fetcher: Fetch): Fetch {
  // An upstream calls one origin (scheme, host, port) over and over: parsed once.
  const addresses = new Map<string, readonly [string, number] | null>();
  return (url, init) => {
    const out = init.signal ? outgoing.get(init.signal) : undefined;
    if (out === undefined) return fetcher(url, init);
    if (out.span !== NOOP_SPAN) {
      const end = url.indexOf("/", url.indexOf("//") + 2);
      const origin = end === -1 ? url : url.slice(0, end);
      let address = addresses.get(origin);
      if (address === undefined) {
        address = addressOf(origin);
        if (addresses.size < 16) addresses.set(origin, address);
      }
      if (address) out.span.set(ATTR.serverAddress, address[0]).set(ATTR.serverPort, address[1]);
    }
    return fetcher(url, { ...init, headers: withHeaders(init.headers, out) });
  };
}

function withHeaders(headers: HeadersInit | undefined, { traceparent, tracestate }: Outgoing): HeadersInit {
  if (headers instanceof Headers || Array.isArray(headers)) {
    const copy = new Headers(headers);
    copy.set("traceparent", traceparent);
    if (tracestate !== undefined) copy.set("tracestate", tracestate);
    return copy;
  }
  return tracestate === undefined ? { ...headers, traceparent } : { ...headers, traceparent, tracestate };
}

/** `server.address` and `server.port` of an origin. */
function addressOf(url: string): readonly [string, number] | null {
  const parsed = URL.parse(url);
  if (!parsed) return null;
  return [parsed.hostname.replace(/^\[|\]$/g, ""), parsed.port ? Number(parsed.port) : parsed.protocol === "https:" ? 443 : 80];
}
