import { GatewayError } from "../errors.ts";
import type { Upstream, UpstreamFetch } from "./kind.ts";
import { KINDS } from "./kinds.ts";

const overLimit = (name: string, max: number) =>
  new GatewayError(502, "service_unavailable_error", `Upstream '${name}' sent a reply larger than UPSTREAM_MAX_BYTES (${max} bytes); parley stopped reading it.`);

/**
 * Every upstream's fetch, with its non-streamed replies bounded: a declared length over `max` is
 * refused before a byte is read, and a body read whole (`text()`, what providers read replies
 * and error bodies with) stops at `max`. A stream read as a stream is not touched: its events are
 * bounded where they are parsed. One property set per call, no work per chunk.
 */
export function capUpstreams(upstreams: Upstream[], max: number): Upstream[] {
  return upstreams.map((u) => (KINDS[u.kind].local ? u : { ...u, fetch: capped(u.fetch ?? fetch, max, u.name) }));
}

function capped(inner: UpstreamFetch, max: number, name: string): UpstreamFetch {
  return async (url, init) => {
    const response = await inner(url, init);
    const declared = response.headers.get("content-length");
    if (declared !== null && Number(declared) > max) {
      void response.body?.cancel().catch(() => {});
      throw overLimit(name, max);
    }
    if (declared === null) Object.defineProperty(response, "text", { value: () => readCapped(response, max, name) });
    return response;
  };
}

async function readCapped(response: Response, max: number, name: string): Promise<string> {
  if (!response.body) return "";
  const parts: Uint8Array[] = [];
  let seen = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += value.byteLength;
    if (seen > max) {
      void reader.cancel().catch(() => {});
      throw overLimit(name, max);
    }
    parts.push(value);
  }
  return Buffer.concat(parts).toString();
}
