import type { Endpoint } from "./endpoint.ts";

export interface Found {
  endpoint: Endpoint;
  /** The path's `:name` and `*` parts, as sent (not decoded). */
  params: string[];
  /** A HEAD served by a GET endpoint: the answer goes without its body. */
  head: boolean;
}

const NONE: string[] = [];

interface Pattern {
  segments: string[];
  /** The last segment is `*`: it takes the rest of the path. */
  rest: boolean;
  byMethod: Map<string, Endpoint>;
}

/**
 * Method and path to an endpoint. Literal paths (every model endpoint) are one map lookup; paths
 * with parameters are tried in order after. One trailing slash is ignored. `known` tells a method
 * no endpoint takes on a listed path (405) from an unknown path (404).
 */
export function createRouter(endpoints: Endpoint[]) {
  // A literal path's answers are made once: finding one allocates nothing.
  const exact = new Map<string, Map<string, Found>>();
  const patterns: Pattern[] = [];
  for (const endpoint of endpoints) {
    if (!/[:*]/.test(endpoint.path)) {
      const methods = exact.get(endpoint.path) ?? new Map<string, Found>();
      exact.set(endpoint.path, methods.set(endpoint.method, { endpoint, params: NONE, head: false }));
      continue;
    }
    const segments = endpoint.path.split("/");
    const same = patterns.find((p) => p.segments.join("/") === endpoint.path);
    if (same) same.byMethod.set(endpoint.method, endpoint);
    else patterns.push({ segments, rest: segments.at(-1) === "*", byMethod: new Map([[endpoint.method, endpoint]]) });
  }
  for (const methods of exact.values()) {
    const get = methods.get("GET");
    // A HEAD is a GET without the body, on the listed endpoints (Bedrock's clients never send one).
    if (get && !get.endpoint.unlisted && !methods.has("HEAD")) methods.set("HEAD", { ...get, head: true });
  }

  return {
    find(method: string, path: string): Found | undefined {
      const found = exact.get(path)?.get(method);
      // A literal path may yet be a pattern's under another method (DELETE /v1/files/health is a file id).
      if (found || patterns.length === 0) return found;
      const parts = path.split("/");
      for (const pattern of patterns) {
        const params = match(pattern, parts);
        if (!params) continue;
        const endpoint = pattern.byMethod.get(method);
        if (endpoint) return { endpoint, params, head: false };
        const get = method === "HEAD" ? pattern.byMethod.get("GET") : undefined;
        if (get?.unlisted) continue;
        if (get) return { endpoint: get, params, head: true };
      }
      return undefined;
    },
    /** Some listed endpoint has this path under another method: the answer is 405, not 404. */
    known(path: string): boolean {
      const listed = (all: Iterable<Endpoint>) => [...all].some((e) => !e.unlisted);
      const methods = exact.get(path);
      if (methods) return listed([...methods.values()].map((found) => found.endpoint));
      const parts = path.split("/");
      return patterns.some((pattern) => match(pattern, parts) !== undefined && listed(pattern.byMethod.values()));
    },
  };
}

function match({ segments, rest }: Pattern, parts: string[]): string[] | undefined {
  const fixed = rest ? segments.length - 1 : segments.length;
  if (rest ? parts.length <= fixed : parts.length !== fixed) return undefined;
  const params: string[] = [];
  for (let i = 0; i < fixed; i++) {
    const segment = segments[i]!;
    const part = parts[i]!;
    if (segment.startsWith(":")) {
      if (part === "") return undefined;
      params.push(part);
    } else if (segment !== part) return undefined;
  }
  if (rest) params.push(parts.slice(fixed).join("/"));
  return params;
}
