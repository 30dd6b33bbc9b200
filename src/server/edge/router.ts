import type { Endpoint } from "./endpoint.ts";

export interface Found {
  endpoint: Endpoint;
  /** The path's `:name` and `*` parts, as sent (not decoded). */
  params: string[];
  /** A HEAD served by a GET endpoint: the answer goes without its body. */
  head: boolean;
}

const NONE: string[] = [];

/** A literal segment, or a parameter with the literal tail that may follow it (`:model:generateContent`, Gemini's form). */
type Segment = { literal: string } | { tail: string };

interface Pattern {
  path: string;
  segments: Segment[];
  /** The last segment is `*`: it takes the rest of the path. */
  rest: boolean;
  byMethod: Map<string, Endpoint>;
}

/**
 * Method and path to an endpoint. Literal paths (every model endpoint) are one map lookup that
 * allocates nothing; paths with parameters are tried in order after. `known` tells a method no
 * listed endpoint takes on its path (405) from an unknown path (404).
 */
export function createRouter(endpoints: Endpoint[]) {
  const exact = new Map<string, Map<string, Found>>();
  const patterns: Pattern[] = [];
  for (const endpoint of endpoints) {
    const { path, method } = endpoint;
    if (!/[:*]/.test(path)) {
      const methods = exact.get(path) ?? new Map<string, Found>();
      exact.set(path, methods.set(method, { endpoint, params: NONE, head: false }));
      continue;
    }
    const same = patterns.find((p) => p.path === path);
    if (same) same.byMethod.set(method, endpoint);
    else patterns.push(compile(path, endpoint));
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
        if (get && !get.unlisted) return { endpoint: get, params, head: true };
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

function compile(path: string, endpoint: Endpoint): Pattern {
  const parts = path.split("/");
  const rest = parts.at(-1) === "*";
  const segments = (rest ? parts.slice(0, -1) : parts).map((part): Segment => (part.startsWith(":") ? { tail: part.slice(1).replace(/^\w+/, "") } : { literal: part }));
  return { path, segments, rest, byMethod: new Map([[endpoint.method, endpoint]]) };
}

function match({ segments, rest }: Pattern, parts: string[]): string[] | undefined {
  if (rest ? parts.length <= segments.length : parts.length !== segments.length) return undefined;
  const params: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const part = parts[i]!;
    if ("literal" in segment) {
      if (segment.literal !== part) return undefined;
      continue;
    }
    const { tail } = segment;
    if (part.length <= tail.length || !part.endsWith(tail)) return undefined;
    params.push(tail === "" ? part : part.slice(0, -tail.length));
  }
  if (rest) params.push(parts.slice(segments.length).join("/"));
  return params;
}
