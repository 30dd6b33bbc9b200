import { closest } from "../lib/did-you-mean.ts";
import type { KeyType, KindName } from "../providers/kind.ts";
import { isTable, typeError, unknownKey } from "./file-values.ts";
import { DECLARABLE, isKind, KINDS } from "../providers/kinds.ts";
import { readWhen, type When } from "./when.ts";

/** An upstream's table as the file gives it: checked, `${VAR}`s expanded, not yet a kind's settings. */
export interface FileUpstream {
  name: string;
  kind: KindName;
  table: Record<string, unknown>;
  line: number;
}

/** A `[[routes]]` entry. */
export interface FileRoute {
  /** How logs and `x-parley-route` name it: its `name`, else its 1-based place. */
  name: string;
  /** A glob on the id the client sent (after MODEL_ALIASES); absent: every id. */
  match?: string;
  /** The id sent upstream; absent: the client's. */
  model?: string;
  to: { upstream: string; weight?: number; model?: string }[];
  weighted: boolean;
  /** Conditions on the request, all of which must hold (contract 15); absent: always. */
  when?: When;
  /** Sessions kept on one target (default "session"), and for how long (contract 22). */
  affinity?: "session" | "none";
  affinityTtlS?: number;
  /** Automatic cache breakpoints on requests converted to Anthropic (default "auto"). */
  promptCache?: "auto" | "off";
  /** Where the file declares it. */
  line: number;
}

export interface UpstreamsFile {
  path: string;
  upstreams: FileUpstream[];
  routes: FileRoute[];
  /** `[database] url`: DATABASE_URL's value when the environment does not set it (contract 21). */
  database?: { url: string };
}

/** A mistake in the file, as `FILE:LINE: what is wrong`. */
export class FileError extends Error {}

const NAME = /^[a-z0-9][a-z0-9_-]*$/;
export const COMMON: Record<string, KeyType> = { kind: "string", models: "strings", discover: "boolean", timeout_ms: "integer", retries: "integer", headers: "table" };
export const ROUTE: Record<string, KeyType> = {
  name: "string", match: "string", model: "string", to: "string", when: "table", affinity: "string", affinity_ttl_s: "integer", prompt_cache: "string",
};
/** What a route key must be beyond its type. */
const ROUTE_VALUES: Record<string, [ok: (value: unknown) => boolean, allowed: string]> = {
  affinity: [(v) => v === "session" || v === "none", '"session" or "none"'],
  affinity_ttl_s: [(v) => (v as number) >= 1 && (v as number) <= 86_400, "from 1 to 86400 seconds"],
  prompt_cache: [(v) => v === "auto" || v === "off", '"auto" or "off"'],
};
export const TARGET: Record<string, KeyType> = { upstream: "string", weight: "integer", model: "string" };

const isUrl = (v: unknown) => typeof v === "string" && /^https?:\/\/[^\s/]+/.test(v) && URL.canParse(v);
/** What a value must be beyond its type, checked after `${VAR}`s are read: as the same settings are checked as variables. */
const VALUES: Record<string, [ok: (value: unknown) => boolean, allowed: string]> = {
  base_url: [isUrl, "an http:// or https:// URL"],
  endpoint_url: [isUrl, "an http:// or https:// URL"],
  control_endpoint_url: [isUrl, "an http:// or https:// URL"],
  // AWS writes its regions `us-east-1`, Google Cloud `us-east5` (and Vertex takes `global`).
  region: [(v) => typeof v === "string" && /^([a-z]{2}(-[a-z]+)+-\d+|[a-z]+-[a-z]+\d+|global)$/.test(v), "an AWS region such as us-east-1 (or a Google Cloud region such as us-east5)"],
  timeout_ms: [(v) => (v as number) >= 1, "at least 1"],
  retries: [(v) => (v as number) <= 10, "from 0 to 10"],
  // "in-place" is ALPHA_SYSTEM_MESSAGES' older spelling of "inline": both are taken in both places.
  system_messages: [(v) => v === "inline" || v === "in-place" || v === "top", '"inline" (or "in-place") or "top"'],
};

/**
 * Reads `parley.toml` (contract 13). `lookup` reads a `${VAR}` as every other setting is read. Any
 * mistake throws a FileError naming the line. Bun's TOML parser says what is wrong but not where
 * (its line and column are not the error's), so the lines are found here by hand.
 */
export function readUpstreamsFile(path: string, text: string, lookup: (name: string) => string | undefined, declared: readonly string[] = [], keyless = false): UpstreamsFile {
  const lines = text.split(/\r?\n/);
  const fail = (line: number, message: string): never => {
    throw new FileError(`${path}:${line}: ${message}`);
  };
  let doc: Record<string, unknown>;
  try {
    doc = Bun.TOML.parse(text) as Record<string, unknown>;
  } catch (error) {
    const message = syntaxMessage(error);
    return fail(syntaxLine(lines, message), sentence(message));
  }

  for (const key of Object.keys(doc)) {
    if (key !== "upstreams" && key !== "routes" && key !== "database") fail(lineOf(lines, [], key), unknownKey(key, ["upstreams", "routes", "database"], "at the top of the file"));
  }
  const database = doc.database === undefined ? undefined : readDatabase(doc.database, (key, message) => fail(lineOf(lines, ["database"], key), message), lookup);
  const tables = doc.upstreams ?? {};
  if (!isTable(tables)) fail(lineOf(lines, [], "upstreams"), "upstreams must be tables: [upstreams.<name>]");

  const upstreams: FileUpstream[] = [];
  for (const [name, raw] of Object.entries(tables as Record<string, unknown>)) {
    const at = (key?: string) => lineOf(lines, ["upstreams", name], key);
    if (!NAME.test(name)) fail(at(), `upstream name '${name}' must be lower-case letters, digits, '-' and '_', starting with a letter or digit`);
    if (name === "mock") fail(at(), "the name 'mock' is parley's built-in mock; choose another name");
    if (!isTable(raw)) fail(at(), `[upstreams.${name}] must be a table`);
    const table = raw as Record<string, unknown>;
    const kind = table.kind;
    if (kind === undefined) fail(at(), `[upstreams.${name}] needs kind = ${quoted([...DECLARABLE])}`);
    if (typeof kind !== "string" || !isKind(kind) || !DECLARABLE.includes(kind)) {
      const kinds = [...DECLARABLE];
      const near = typeof kind === "string" ? closest(kind, kinds) : undefined;
      return fail(at("kind"), `unknown kind ${JSON.stringify(kind)}${near ? ` (did you mean "${near}"?)` : ""}; kinds are ${quoted(kinds)}`);
    }
    const keys: Record<string, KeyType> = { ...COMMON, ...KINDS[kind].keys };
    for (const [key, value] of Object.entries(table)) {
      if (!Object.hasOwn(keys, key)) fail(at(key), unknownKey(key, Object.keys(keys), `in [upstreams.${name}] (kind ${kind})`));
      const wrong = typeError(value, keys[key]!);
      if (wrong) fail(at(key), `${key} in [upstreams.${name}] must be ${wrong}`);
    }
    // `keyless` (replay: no call goes out): a required secret may be left out.
    for (const key of KINDS[kind].required) if (table[key] === undefined && !(keyless && KINDS[kind].secrets.includes(key))) fail(at(), `[upstreams.${name}] (kind ${kind}) needs ${key}`);
    const expanded = expand(table, (variable, key) => lookup(variable) ?? fail(at(key), `\${${variable}} is not set (used in [upstreams.${name}] ${key})`));
    for (const [key, value] of Object.entries(expanded)) {
      const rule = Object.hasOwn(VALUES, key) ? VALUES[key]! : undefined;
      if (rule && !rule[0](value)) fail(at(key), `${key} in [upstreams.${name}] must be ${rule[1]}${typeof value === "string" && !KINDS[kind].secrets.includes(key) ? `, not ${JSON.stringify(value)}` : ""}`);
    }
    upstreams.push({ name, kind, table: expanded, line: at() });
  }

  const names = new Set([...declared, "mock", ...upstreams.map((u) => u.name)]);
  const rawRoutes = doc.routes ?? [];
  if (!Array.isArray(rawRoutes)) return fail(lineOf(lines, [], "routes"), "routes must be an array of tables: [[routes]]");
  const routes = rawRoutes.map((raw, index): FileRoute => {
    const at = (key?: string) => lineOf(lines, ["routes", index], key);
    if (!isTable(raw)) fail(at(), "each [[routes]] entry must be a table");
    const route = raw as Record<string, unknown>;
    for (const [key, value] of Object.entries(route)) {
      if (!Object.hasOwn(ROUTE, key)) fail(at(key), unknownKey(key, Object.keys(ROUTE), "in [[routes]]"));
      if (key !== "to" && key !== "when" && typeError(value, ROUTE[key]!)) fail(at(key), `${key} in [[routes]] must be ${typeError(value, ROUTE[key]!)}`);
    }
    // Keys written after a [routes.when] header belong to the when table, not to the route.
    const strayed = isTable(route.when) ? Object.keys(route.when).find((key) => Object.hasOwn(ROUTE, key)) : undefined;
    if (strayed) fail(lineWithin(lines, at(), strayed), `${strayed} = … follows [routes.when], so it is read as a condition: put the route's own keys before [routes.when], or write when = { … } on one line`);
    if (route.to === undefined) fail(at(), "a route needs to = [\"<upstream>\", …]");
    const expanded = expand(route, (variable, key) => lookup(variable) ?? fail(at(key), `\${${variable}} is not set (used in [[routes]] ${key})`));
    const list = typeof expanded.to === "string" ? [expanded.to] : expanded.to;
    if (!Array.isArray(list) || list.length === 0) return fail(at("to"), "to must be an upstream name or a non-empty array of names or { upstream, weight, model } tables");
    const to = list.map((target) => {
      const entry = typeof target === "string" ? { upstream: target } : target;
      if (!isTable(entry)) return fail(at("to"), "each target in to must be an upstream name or a { upstream, weight, model } table");
      for (const [key, value] of Object.entries(entry)) {
        if (!Object.hasOwn(TARGET, key)) fail(at("to"), unknownKey(key, Object.keys(TARGET), "in a target of to"));
        if (typeError(value, TARGET[key]!)) fail(at("to"), `${key} in a target of to must be ${typeError(value, TARGET[key]!)}`);
      }
      const upstream = entry.upstream as string | undefined;
      if (upstream === undefined) return fail(at("to"), "a target table needs upstream = \"<name>\"");
      if (!names.has(upstream)) {
        const near = closest(upstream, [...names]);
        fail(at("to"), `the route names no upstream '${upstream}'${near ? ` (did you mean '${near}'?)` : ""}; upstreams are ${quoted([...names])}`);
      }
      if (entry.weight !== undefined && !((entry.weight as number) > 0)) fail(at("to"), "weight must be a positive integer");
      return { upstream, ...(entry.weight !== undefined ? { weight: entry.weight as number } : {}), ...(entry.model !== undefined ? { model: entry.model as string } : {}) };
    });
    for (const [key, [ok, allowed]] of Object.entries(ROUTE_VALUES)) {
      if (expanded[key] !== undefined && !ok(expanded[key])) fail(at(key), `${key} in [[routes]] must be ${allowed}, not ${JSON.stringify(expanded[key])}`);
    }
    const when = expanded.when === undefined ? undefined : readWhen(expanded.when, (key, message) => fail(key === undefined ? at("when") : lineWithin(lines, at(), key), message));
    return {
      name: typeof expanded.name === "string" ? expanded.name : String(index + 1),
      ...(expanded.match !== undefined ? { match: expanded.match as string } : {}),
      ...(expanded.model !== undefined ? { model: expanded.model as string } : {}),
      to,
      weighted: to.some((t) => t.weight !== undefined),
      ...(when ? { when } : {}),
      ...(expanded.affinity !== undefined ? { affinity: expanded.affinity as "session" | "none" } : {}),
      ...(expanded.affinity_ttl_s !== undefined ? { affinityTtlS: expanded.affinity_ttl_s as number } : {}),
      ...(expanded.prompt_cache !== undefined ? { promptCache: expanded.prompt_cache as "auto" | "off" } : {}),
      line: at(),
    };
  });
  return { path, upstreams, routes, ...(database ? { database } : {}) };
}

/** `[database]`: only `url`, a Postgres URL (its `${VAR}`s read, so the password can stay in the environment). */
function readDatabase(table: unknown, fail: (key: string | undefined, message: string) => never, lookup: (name: string) => string | undefined): { url: string } {
  if (!isTable(table)) return fail(undefined, "database must be a table: [database]");
  for (const key of Object.keys(table)) if (key !== "url") fail(key, unknownKey(key, ["url"], "in [database]"));
  if (typeof table.url !== "string") return fail("url", "url in [database] must be a string: postgres://user:password@host:5432/db");
  const url = expand(table, (variable) => lookup(variable) ?? fail("url", `\${${variable}} is not set (used in [database] url)`)).url as string;
  if (!(/^postgres(ql)?:\/\/\S+$/.test(url) && URL.canParse(url))) fail("url", "url in [database] must be a postgres:// or postgresql:// URL");
  return { url };
}

const quoted = (names: string[]) => names.map((n) => `"${n}"`).join(", ");

/** Every `${VAR}` in the table's strings, read; `missing` fails for an unset one. */
function expand(table: Record<string, unknown>, read: (variable: string, key: string) => string): Record<string, unknown> {
  const one = (value: unknown, key: string): unknown => {
    if (typeof value === "string") return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, variable: string) => read(variable, key));
    if (Array.isArray(value)) return value.map((v) => one(v, key));
    if (isTable(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, one(v, key)]));
    return value;
  };
  return Object.fromEntries(Object.entries(table).map(([key, value]) => [key, one(value, key)]));
}

/**
 * The line of a table (`["upstreams", "ollama"]`, `["routes", 2]`) or of a key in it: headers are
 * matched by their dotted name (quotes dropped), keys by `key =` at the start of a line within the
 * table, or by a header of their own (`[upstreams.ollama.headers]`, `[upstream.x]` at the top).
 */
export function lineOf(lines: string[], table: (string | number)[], key?: string): number {
  let header = 0;
  let routes = -1;
  let inside = table.length === 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    const head = /^\[\[?\s*([^\]]+?)\s*\]\]?/.exec(line);
    if (head) {
      const path = (head[1]!.match(/"[^"]*"|'[^']*'|[^.]+/g) ?? []).map((p) => p.trim().replace(/^["']|["']$/g, ""));
      if (line.startsWith("[[") && path[0] === "routes") routes++;
      if (key !== undefined && path.length > table.length && path[table.length] === key && table.every((p, n) => p === path[n])) return i + 1;
      inside = table[0] === "routes" ? line.startsWith("[[") && path.length === 1 && path[0] === "routes" && routes === table[1] : path.length === table.length && path.every((p, n) => p === table[n]);
      if (inside && !header) header = i + 1;
      if (inside && key === undefined) return i + 1;
      if (!inside && header && key !== undefined) break;
      continue;
    }
    if (inside && key !== undefined && new RegExp(`^["']?${escape(key)}["']?\\s*=`).test(line)) return i + 1;
    // Inline tables and dotted keys at the top: `upstreams.ollama.kind = …` or `ollama = { … }` under [upstreams].
    if (typeof table[1] === "string" && !header && new RegExp(`^(${table[0]}\\s*\\.\\s*)?["']?${escape(table[1])}["']?\\s*[=.]`).test(line)) header = i + 1;
  }
  return header || 1;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The parser's message, less the text it choked on: that may be a secret written without quotes. */
const syntaxMessage = (error: unknown) => (error as Error).message.replace(/^TOML Parse error: /, "").replace(/:\s*".*"$/, "");

/** The parser's message as a sentence: no byte codes (`found (0x0A)`), and what to do where it is plain. */
function sentence(message: string): string {
  const header = /^Expected '(\]\]?)' to close an? (table|array-of-tables) header but found \(0x0A\)$/.exec(message);
  if (header) return `the ${header[2] === "table" ? "table" : "[[…]]"} header on this line is not closed: end it with '${header[1]}'`;
  return message
    .replace(/ but found \(0x0A\)/, " before the end of the line")
    .replace(/ but found end of file/, " before the end of the file")
    .replace(/\(0x([0-9A-F]{2})\)/gi, (_, hex: string) => JSON.stringify(String.fromCharCode(parseInt(hex, 16))));
}

/**
 * The line of a key inside the table that starts at line `from` (1-based), its sub-tables included
 * (`[routes.when]`, `when = { … }`, `when.thinking = …`): the table ends at the next `[[` or a header of another table.
 */
function lineWithin(lines: string[], from: number, key: string): number {
  const assigns = new RegExp(`(^|[\\s{,.])["']?${escape(key)}["']?\\s*=`, "i");
  for (let i = from; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line.startsWith("[[") || (line.startsWith("[") && !/^\[\s*routes\s*\./.test(line))) break;
    if (assigns.test(line)) return i + 1;
  }
  return from;
}

/**
 * The line a syntax error is on: the first prefix of the file (in whole lines, each with its newline:
 * many messages name the newline they found) that fails with the same message as the whole file. A
 * prefix cut inside a multi-line value fails otherwise, so it is skipped.
 */
function syntaxLine(lines: string[], message: string): number {
  for (let n = 1; n <= lines.length; n++) {
    try {
      Bun.TOML.parse(lines.slice(0, n).join("\n") + (n < lines.length ? "\n" : ""));
    } catch (error) {
      if (syntaxMessage(error) === message) return n;
    }
  }
  return lines.length;
}

