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
  path: string;
  /** The literal start before the first parameter: most paths are told apart by it without the expression. */
  prefix: string;
  /** `:name` is one segment (a literal tail may follow it: `:model:generateContent`, Gemini's form), a last `*` the rest. */
  expression: RegExp;
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
      for (const pattern of patterns) {
        if (!path.startsWith(pattern.prefix)) continue;
        const params = match(pattern, path);
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
      return patterns.some((pattern) => match(pattern, path) !== undefined && listed(pattern.byMethod.values()));
    },
  };
}

function compile(path: string, endpoint: Endpoint): Pattern {
  const source = path.split("/").map((part, i, all) => {
    if (part === "*" && i === all.length - 1) return "(.+)";
    if (!part.startsWith(":")) return escape(part);
    return `([^/]+)${escape(part.slice(1).replace(/^\w+/, ""))}`;
  });
  return { path, prefix: path.slice(0, path.search(/[:*]/)), expression: new RegExp(`^${source.join("/")}$`), byMethod: new Map([[endpoint.method, endpoint]]) };
}

const escape = (text: string) => text.replace(/[.+?^${}()|[\]\\*]/g, "\\$&");

function match(pattern: Pattern, path: string): string[] | undefined {
  const found = pattern.expression.exec(path);
  return found ? found.slice(1) : undefined;
}
