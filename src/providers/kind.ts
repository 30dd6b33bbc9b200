import type { ListedModel } from "./models.ts";
import type { Provider } from "./provider.ts";

/**
 * The table of kinds by name, as kinds.ts declares it (it merges its table into this interface):
 * the names come from the table itself, and this file, which every kind imports, imports no kind.
 */
export interface KindTable {}

/** The kinds of upstream parley can call; each is one folder under src/providers/ and one line in kinds.ts. */
export type KindName = keyof KindTable & string;

/** How a value in an upstream's table of parley.toml is checked. */
export type KeyType = "string" | "boolean" | "integer" | "strings" | "table";

/** One server parley calls, named by the user: an instance of a kind with its own settings. */
export interface Upstream<S = unknown> {
  name: string;
  kind: KindName;
  settings: S;
  /** The ids it serves, when the user listed them (discovery is then off). */
  models?: string[];
  discover: boolean;
  timeoutMs: number;
  retries: number;
  /** Sent with every call. */
  headers: Record<string, string>;
  /** Where it was declared, for errors that tell the user what to set: `ALPHA_*` variables, `parley.toml:12`. */
  origin: { variables?: Record<string, string>; file?: string };
  /** What /health says proves parley to it, when its settings do not tell (replay's stand-in key: as recorded). */
  shownCredentials?: string;
  /** What its provider calls instead of the global fetch: set only by `serve --cassettes` (record and replay). */
  fetch?: UpstreamFetch;
}

/** The one function every call to an upstream goes through. */
export type UpstreamFetch = (url: string, init: BunFetchRequestInit) => Promise<Response>;

/**
 * A kind: reads and checks an upstream's settings, says what is missing, builds the provider
 * (loaded on first use: a server that never calls Bedrock never loads its code) and lists models.
 */
export interface Kind<S = any> {
  /** The keys its table takes beyond the common ones. */
  keys: Record<string, KeyType>;
  /** Keys that must be present in a file's table. */
  required: string[];
  /** Keys whose values are secrets (masked wherever parley prints configuration). */
  secrets: string[];
  /** Settings from a file's checked table (strings already expanded). */
  settings(table: Record<string, unknown>): S;
  /** What the user must set before parley can call it, or undefined when it is ready. */
  missing(upstream: Upstream<S>): string | undefined;
  build(upstream: Upstream<S>): Promise<Provider>;
  list?(upstream: Upstream<S>): Promise<ListedModel[]>;
  /** What proves parley to it, as /health names it (`static keys`, `profile`, …); absent: nothing to say. */
  credentials?(settings: S): string;
  /** Where it is, for `parley upstreams`: a URL or a region. */
  where(settings: S): string;
  /** The model ids of contract 2 that go to this kind when nothing else routes them. */
  patterns?: RegExp[];
  /** Later kinds in the table serve some of its patterns' ids too (gemini-*: Vertex): a route goes on to their upstreams. */
  sharesIds?: boolean;
  /** The id sent to this upstream for a model the client named (Bedrock names Claude models by its region's profile). */
  modelFor?(model: string, settings: S): string;
  /** Its ids start with its upstream's name (`mock/tools`): `<upstream>/<model>` sends the whole id. */
  wholeIds?: boolean;
  /**
   * Some ids it serves are in no list it gives (Bedrock's ARNs and inference profiles): a list that
   * lacks an id does not mean it cannot serve it, so its patterns and Claude names still go to it.
   */
  unlistedIds?: boolean;
  /** Whether ids of the form `claude-*` go to this kind, and in which order (Anthropic's own before Bedrock). */
  claude?: number;
  /** Well-known models: what /v1/models shows for it when discovery has nothing (any id that routes can still be used). */
  catalogue?: readonly ListedModel[];
  /** Parley's own and always there (the mock): no file declares one, and it is no real upstream. */
  builtIn?: boolean;
  /** Its calls never leave parley: no credentials to stand in for in replay, nothing for a cassette to record. */
  local?: boolean;
}

/** A URL as errors and logs may show it: a password in it (`http://user:secret@host`) masked. */
export function shownUrl(url: string): string {
  // A URL that parses has its userinfo where the parser found it; one that does not may still carry
  // a password holding `@` or `/`: everything up to the last `@` is then taken for userinfo.
  const parses = URL.canParse(url);
  if (parses && !new URL(url).password && !new URL(url).username) return url;
  const userinfo = parses ? /^(\w+:\/\/)([^/@\s]+)@/ : /^(\w+:\/\/)(\S+)@/;
  return url.replace(userinfo, (_, scheme: string, info: string) => `${scheme}${info.includes(":") ? `${info.slice(0, info.indexOf(":"))}:****` : "****"}@`);
}

/** How to set one of an upstream's settings: its variable (`ALPHA_API_KEY`) or its key in the file. */
export function settingName(upstream: Upstream, key: string): string {
  const variable = upstream.origin.variables?.[key];
  if (variable) return variable;
  return `${key} in [upstreams.${upstream.name}]${upstream.origin.file ? ` of ${upstream.origin.file}` : ""}`;
}
