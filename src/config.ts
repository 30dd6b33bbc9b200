import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parse as parseDotenv } from "dotenv";
import type { AwsSettings } from "./lib/aws.ts";
import type { CassetteMode, CassetteSettings } from "./cassettes/cassettes.ts";
import { offline, REPLAY_KEY } from "./cassettes/offline.ts";
import { declareUpstreams, SPEC_UPSTREAMS, upstreamNamed, type Declared } from "./routing/upstreams.ts";
import { FileError, readUpstreamsFile } from "./routing/upstreams-file.ts";

/** Where a value came from, highest precedence first. */
export type Source = "flag" | "env" | ".env" | "config file" | "default";

export type LogLevel = "silent" | "error" | "warn" | "info" | "debug" | "trace";
export type Scope = "chat" | "models" | "files:read" | "files:write" | "usage" | "metrics";
export const SCOPES: readonly Scope[] = ["chat", "models", "files:read", "files:write", "usage", "metrics"];

export interface Config {
  host: string;
  port: number;
  workers: number;
  logLevel: LogLevel;
  logFormat: "text" | "json";
  environment: string;
  debug: boolean;
  corsOrigins: string[] | "*";
  apiKey: string | undefined;
  apiKeys: KeyEntry[];
  /** INGRESS_AWS_CREDENTIALS: the access key AWS clients may sign Bedrock Runtime calls with, standing for API_KEY. */
  ingressAwsCredentials?: { accessKeyId: string; secretAccessKey: string };
  /** DEFAULT_ALPHA_MODEL: the model of a request that names none. */
  defaultModel?: string;
  /** Every upstream (the spec's variables', the file's, the mock) and the file's routes. */
  upstreams: Declared;
  /** `aws`: S3's region and credentials (OBJSTORE_*, else BETA_*). */
  files: { bucket?: string; endpointUrl?: string; maxUploadBytes: number; contextMaxChars: number; aws: AwsSettings & { region?: string } };
  modelAliases: ReadonlyMap<string, string>;
  /** MODEL_ROUTES: id glob -> upstream name. */
  modelRoutes: { pattern: string; upstream: string }[];
  /** Model id -> the models tried next when its attempts end in a retryable error. */
  modelFallbacks: ReadonlyMap<string, string[]>;
  rateLimitRpm: number;
  /** Usage records in SQLite (and the costs and budgets they feed); off: only budgets still count. */
  usage: boolean;
  usageRetentionDays: number;
  metrics: boolean;
  redisUrl: string | undefined;
  rateLimitOnRedisError: "open" | "closed";
  upstreamTimeoutMs: number;
  upstreamRetries: number;
  /** Seconds an upstream is skipped after three retryable failures in a row. */
  upstreamCooldownS: number;
  shutdownGraceMs: number;
  /** serve exits when the process that started it dies (an app running parley as its sidecar). */
  exitWithParent: boolean;
  modelsRefreshS: number;
  /** serve --cassettes: upstream calls recorded to, or replayed from, HAR files in a directory. */
  cassettes?: CassetteSettings;
  dataDir: string;
  configDir: string;
}

/** A daily allowance, in tokens or US dollars, counted per UTC day. */
export interface Budget {
  amount: number;
  unit: "tokens" | "usd";
}

/** One `API_KEYS` entry: `[name=]key:scope+scope[@<N>tokens/day|@<N>usd/day]`. */
export interface KeyEntry {
  key: string;
  scopes: Scope[];
  name?: string;
  budget?: Budget;
}

/** A value's rule: what is wrong with a value (the allowed values), or undefined when it is fine. */
export type Check = ((value: string) => string | undefined) & { allowed: string };

/** The subjects the settings are grouped by, in the order `parley config show` and docs/configuration.md list them. */
export const GROUPS = {
  server: "Server",
  keys: "Keys",
  openai: "OpenAI and OpenAI-compatible servers",
  bedrock: "AWS Bedrock",
  models: "Models and routing",
  upstream: "Upstream calls",
  files: "Files",
  limits: "Limits, usage and metrics",
  gateways: "Several gateways",
  directories: "Directories",
} as const;

export interface Setting {
  key: string;
  group: keyof typeof GROUPS;
  aliases?: string[];
  secret?: boolean;
  fallback?: string;
  /** The default in words, when unset means more than "nothing" (computed at start, or a built-in list). */
  unset?: string;
  check?: Check;
  help: string;
}

const LOG_LEVELS: Record<string, LogLevel> = {
  silent: "silent", critical: "error", fatal: "error", error: "error", warn: "warn", warning: "warn",
  info: "info", debug: "debug", trace: "trace", verbose: "trace",
};
const BOOLEANS: Record<string, boolean> = { true: true, "1": true, yes: true, on: true, false: false, "0": false, no: false, off: false };

const rule = (allowed: string, ok: (value: string) => boolean): Check =>
  Object.assign((v: string) => (ok(v) ? undefined : allowed), { allowed });
const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  rule(max === Number.MAX_SAFE_INTEGER ? `an integer, ${min} or more` : `an integer from ${min} to ${max}`, (v) => /^\d+$/.test(v) && Number(v) >= min && Number(v) <= max);
const oneOf = (values: readonly string[]) => rule(`one of ${values.join(", ")}`, (v) => values.includes(v.toLowerCase()));
const url = rule("an http:// or https:// URL", (v) => /^https?:\/\/[^\s/]+/.test(v) && URL.canParse(v));
const noSpace = rule("a non-empty value without spaces", (v) => v.length > 0 && !/\s/.test(v));
const region = rule("an AWS region such as us-east-1", (v) => /^[a-z]{2}(-[a-z]+)+-\d+$/.test(v));
const boolean = oneOf(Object.keys(BOOLEANS));
const pairs = (sep: string, valid: (left: string, right: string) => boolean, shape: string) =>
  rule(shape, (v) =>
    splitList(v).every((item) => {
      const at = item.indexOf(sep);
      return at > 0 && valid(item.slice(0, at), item.slice(at + 1));
    }));

const KEY_SHAPE = `[name=]key:scope+scope[@<N>tokens/day|@<N>usd/day],… with scopes from ${SCOPES.join(", ")}`;

/** Every setting, grouped by subject: the one table config, `parley config` and docs/configuration.md read. */
export const SETTINGS: readonly Setting[] = [
  { key: "HOST", group: "server", fallback: "127.0.0.1", check: noSpace, help: "address to listen on (0.0.0.0: every interface)" },
  { key: "PORT", group: "server", fallback: "8000", check: int(0, 65535), help: "port to listen on (0 picks a free one)" },
  { key: "WORKERS", group: "server", fallback: "1", check: int(1, 64), help: "server processes sharing the port, under a supervisor that restarts them" },
  { key: "SHUTDOWN_GRACE_MS", group: "server", fallback: "10000", check: int(0), help: "time in-flight requests and streams get to finish on shutdown" },
  { key: "PARLEY_EXIT_WITH_PARENT", group: "server", fallback: "false", check: boolean, help: "stop within 2 s of the process that started serve dying, SIGKILL included (serve --exit-with-parent; an app's sidecar)" },
  { key: "LOG_LEVEL", group: "server", fallback: "info", check: oneOf(Object.keys(LOG_LEVELS)), help: "logging level" },
  { key: "LOG_FORMAT", group: "server", fallback: "text", check: oneOf(["text", "json"]), help: "text, or json for one JSON object per log line" },
  { key: "ENVIRONMENT", group: "server", fallback: "development", check: noSpace, help: "development or production (production limits CORS to CORS_ORIGINS)" },
  { key: "CORS_ORIGINS", group: "server", help: "allowed origins in production, comma-separated" },
  { key: "DEBUG", group: "server", fallback: "false", check: boolean, help: "true puts the upstream's error text in error.details" },
  { key: "API_KEY", group: "keys", secret: true, unset: "generated by `parley serve` and saved to the config file", check: noSpace, help: "key clients must present; it may do everything" },
  {
    key: "API_KEYS", group: "keys", secret: true, help: "extra keys, each limited to scopes and optionally to a daily budget in tokens or US dollars",
    check: Object.assign((v: string) => checkKeyEntries(v), { allowed: `${KEY_SHAPE}; each name used once, not "main" or "key-…"` }),
  },
  {
    key: "INGRESS_AWS_CREDENTIALS", group: "keys", secret: true,
    check: rule("<access key id>:<secret access key>", (v) => /^[A-Za-z0-9]+:\S+$/.test(v)),
    help: "an AWS access key (id:secret) that Bedrock Runtime clients may sign with (SigV4) instead of sending a bearer key; it stands for API_KEY",
  },
  { key: "ALPHA_API_KEY", group: "openai", aliases: ["OPENAI_API_KEY"], secret: true, check: noSpace, help: "OpenAI API key (not needed by a local server that checks none)" },
  { key: "ALPHA_BASE_URL", group: "openai", fallback: "https://api.openai.com/v1", check: url, help: "OpenAI or any OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp)" },
  { key: "DEFAULT_ALPHA_MODEL", group: "openai", check: noSpace, help: "model used when a request names none" },
  {
    key: "ALPHA_SYSTEM_MESSAGES", group: "openai", fallback: "in-place", check: oneOf(["in-place", "top"]),
    help: "a converted request's mid-conversation system messages: in-place, or top (one system message first, turns alternating, for chat templates that refuse them)",
  },
  { key: "BETA_REGION", group: "bedrock", aliases: ["AWS_REGION", "AWS_DEFAULT_REGION"], check: region, help: "AWS region for Bedrock and S3" },
  { key: "BETA_API_KEY", group: "bedrock", aliases: ["AWS_BEARER_TOKEN_BEDROCK"], secret: true, check: noSpace, help: "Bedrock API key (sent as a bearer token instead of SigV4)" },
  { key: "BETA_PROFILE", group: "bedrock", aliases: ["AWS_PROFILE"], check: noSpace, help: "AWS named profile" },
  { key: "BETA_ACCESS_KEY_ID", group: "bedrock", aliases: ["AWS_ACCESS_KEY_ID"], secret: true, check: noSpace, help: "AWS access key id (without static keys: the AWS default chain)" },
  { key: "BETA_SECRET_ACCESS_KEY", group: "bedrock", aliases: ["AWS_SECRET_ACCESS_KEY"], secret: true, check: noSpace, help: "AWS secret access key" },
  { key: "BETA_SESSION_TOKEN", group: "bedrock", aliases: ["AWS_SESSION_TOKEN"], secret: true, check: noSpace, help: "AWS session token" },
  {
    key: "BETA_ENDPOINT_URL", group: "bedrock", unset: "https://bedrock-runtime.<region>.amazonaws.com (.com.cn in China, .eu in eusc- regions)", check: url,
    help: "Bedrock Runtime endpoint override (FIPS, VPC endpoints, a local fake)",
  },
  {
    key: "BETA_CONTROL_ENDPOINT_URL", group: "bedrock", unset: "https://bedrock.<region>.amazonaws.com (.com.cn in China, .eu in eusc- regions)", check: url,
    help: "Bedrock control-plane endpoint override (model discovery, inference profiles)",
  },
  {
    key: "BETA_ANTHROPIC_BETAS", group: "bedrock", unset: "a built-in list per model", help: "anthropic-beta values passed on to Bedrock Claude, comma-separated, for every model",
    check: rule("beta names such as context-1m-2025-08-07, comma-separated", (v) => splitList(v).every((b) => /^[\w.-]+$/.test(b))),
  },
  {
    key: "MODEL_ALIASES", group: "models", help: "alias=model,… names clients may use (checked first)",
    check: pairs("=", (a, m) => !/\s/.test(a + m) && m.length > 0, "alias=model,…"),
  },
  {
    key: "MODEL_ROUTES", group: "models", help: "pattern=upstream,… routes checked after <upstream>/<model> and before parley.toml's routes (* matches anything; openai and bedrock stand for alpha and beta)",
    check: pairs("=", (p, upstream) => p.length > 0 && /^[a-z0-9][a-z0-9_-]*$/.test(upstream), "pattern=upstream,… naming alpha (or openai), beta (or bedrock), mock or an upstream of parley.toml"),
  },
  {
    key: "MODEL_FALLBACKS", group: "models", help: "model=first|second,… models tried in turn when a model's calls fail (retryable errors only)",
    check: pairs("=", (m, list) => !/\s/.test(m + list) && list.split("|").every(Boolean), "model=fallback|fallback,…"),
  },
  { key: "MODELS_REFRESH_S", group: "models", fallback: "600", check: int(0), help: "seconds between model list refreshes from the upstreams (0: discovery off)" },
  { key: "UPSTREAM_TIMEOUT_MS", group: "upstream", fallback: "600000", check: int(1), help: "time to the upstream's first byte (504 after it), and the longest silence between two chunks of a stream" },
  { key: "UPSTREAM_RETRIES", group: "upstream", fallback: "2", check: int(0, 10), help: "retries of a failed upstream call before its first byte (a route with several targets tries each at least once)" },
  { key: "UPSTREAM_COOLDOWN_S", group: "upstream", fallback: "30", check: int(0), help: "seconds an upstream is skipped after three retryable failures in a row (0: never)" },
  { key: "PARLEY_UPSTREAMS", group: "upstream", unset: "./parley.toml, else parley.toml in PARLEY_CONFIG_DIR, when there is one", check: noSpace, help: "the upstreams file: named upstreams of every kind and [[routes]] (docs/upstreams.md)" },
  { key: "PARLEY_CASSETTES", group: "upstream", check: rule("a directory", (v) => v.length > 0), help: "directory of cassettes (DIR/<name>.har, named by the x-parley-cassette header, default `default`): upstream calls recorded or replayed (serve --cassettes; docs/ci.md)" },
  { key: "PARLEY_CASSETTE_MODE", group: "upstream", fallback: "replay", check: oneOf(["record", "replay", "auto"]), help: "with PARLEY_CASSETTES: record (call the upstreams, write the calls down), replay (answer from the cassettes, nothing goes out, no keys needed) or auto (replay what is there, record the rest)" },
  { key: "PARLEY_REPLAY_PACE", group: "upstream", fallback: "fast", check: oneOf(["fast", "recorded"]), help: "replayed streams: fast (at once) or recorded (with the gaps between chunks as recorded)" },
  { key: "OBJSTORE_FILES_BUCKET", group: "files", check: noSpace, help: "S3 bucket for file bytes (unset: a local store under PARLEY_DATA_DIR)" },
  { key: "OBJSTORE_ENDPOINT_URL", group: "files", unset: "AWS S3 in OBJSTORE_REGION", check: url, help: "S3-compatible endpoint (path-style)" },
  { key: "OBJSTORE_REGION", group: "files", unset: "BETA_REGION, else us-east-1", check: region, help: "S3's region" },
  { key: "OBJSTORE_PROFILE", group: "files", unset: "BETA_PROFILE (when no OBJSTORE_ credential is set)", check: noSpace, help: "AWS named profile for S3" },
  { key: "OBJSTORE_ACCESS_KEY_ID", group: "files", secret: true, unset: "BETA_ACCESS_KEY_ID (when no OBJSTORE_ credential is set)", check: noSpace, help: "AWS access key id for S3" },
  { key: "OBJSTORE_SECRET_ACCESS_KEY", group: "files", secret: true, unset: "BETA_SECRET_ACCESS_KEY (when no OBJSTORE_ credential is set)", check: noSpace, help: "AWS secret access key for S3" },
  { key: "OBJSTORE_SESSION_TOKEN", group: "files", secret: true, unset: "BETA_SESSION_TOKEN (when no OBJSTORE_ credential is set)", check: noSpace, help: "AWS session token for S3" },
  { key: "MAX_UPLOAD_BYTES", group: "files", fallback: String(512 * 1024 * 1024), check: int(1), help: "largest accepted upload (bodies of other requests: this plus 1 MiB)" },
  { key: "FILE_CONTEXT_MAX_CHARS", group: "files", fallback: "100000", check: int(1), help: "characters of one file put into a chat" },
  { key: "RATE_LIMIT_RPM", group: "limits", fallback: "600", check: int(0), help: "requests per minute per key (0: off)" },
  { key: "USAGE", group: "limits", fallback: "on", check: boolean, help: "usage records in SQLite, for parley usage and /v1/usage (off: none kept; budgets still count)" },
  { key: "USAGE_RETENTION_DAYS", group: "limits", fallback: "90", check: int(1, 36500), help: "days usage records are kept" },
  { key: "METRICS", group: "limits", fallback: "on", check: boolean, help: "Prometheus metrics at /metrics (scope metrics; off: 404)" },
  {
    key: "REDIS_URL", group: "gateways", secret: true, help: "Redis shared by several gateways for rate limits and budgets (unset: SQLite, shared by one machine's workers)",
    check: rule("a redis:// or rediss:// URL", (v) => /^rediss?:\/\/\S+$/.test(v) && URL.canParse(v)),
  },
  { key: "RATE_LIMIT_ON_REDIS_ERROR", group: "gateways", fallback: "open", check: oneOf(["open", "closed"]), help: "Redis unreachable: open lets requests through uncounted, closed answers 503" },
  { key: "PARLEY_DATA_DIR", group: "directories", unset: "$XDG_DATA_HOME/parley, else ~/.local/share/parley", check: noSpace, help: "SQLite database and local file store" },
  { key: "PARLEY_CONFIG_DIR", group: "directories", unset: "$XDG_CONFIG_HOME/parley, else ~/.config/parley", check: noSpace, help: "user configuration file (config.env); set it in the environment, not in the file" },
];

const BY_KEY = new Map(SETTINGS.map((s) => [s.key, s]));

export class ConfigError extends Error {}

export interface Entry {
  key: string;
  value: string | undefined;
  source: Source;
  secret: boolean;
}

export interface LoadOptions {
  flags?: Record<string, string | undefined>;
  env?: Record<string, string | undefined>;
  cwd?: string;
}

export interface Loaded {
  config: Config;
  entries: Entry[];
  configFile: string;
  /** The upstreams file read, when there is one: watched for changes. */
  upstreamsFile?: string;
}

export function loadConfig({ flags = {}, env = process.env, cwd = process.cwd() }: LoadOptions = {}): Loaded {
  const dotenv = readEnvFile(join(cwd, ".env"));
  const early: [Source, Record<string, string | undefined>][] = [["flag", flags], ["env", env], [".env", dotenv]];
  const home = env.HOME || homedir();
  const configDir = configDirOf(early, env);
  const configFile = join(configDir, "config.env");
  const layers: [Source, Record<string, string | undefined>][] = [...early, ["config file", readEnvFile(configFile)]];

  const entries = SETTINGS.map((setting): Entry => {
    for (const name of [setting.key, ...(setting.aliases ?? [])]) {
      for (const [source, values] of layers) {
        const value = values[name]?.trim();
        if (value === undefined || value === "") continue;
        const allowed = setting.check?.(value);
        if (allowed) throw new ConfigError(`${name}=${setting.secret ? mask(value) : JSON.stringify(value)} (from ${source}) is invalid: expected ${allowed}`);
        return { key: setting.key, value, source, secret: !!setting.secret };
      }
    }
    return { key: setting.key, value: setting.fallback, source: "default", secret: !!setting.secret };
  });
  const values = Object.fromEntries(entries.map((e) => [e.key, e.value]));
  values.PARLEY_CONFIG_DIR = configDir;
  values.PARLEY_DATA_DIR ??= join(env.XDG_DATA_HOME || join(home, ".local", "share"), "parley");
  const lookup = (name: string) => {
    for (const [, layer] of layers) if (layer[name] !== undefined) return layer[name];
  };
  const upstreamsFile = upstreamsFileOf(values.PARLEY_UPSTREAMS, cwd, configDir);
  // Replay calls no upstream: the file's keys may be unset (`${OPENAI_API_KEY}` in CI, where there is none).
  const replay = !!values.PARLEY_CASSETTES && values.PARLEY_CASSETTE_MODE!.toLowerCase() === "replay";
  const declared = upstreams(values, upstreamsFile, replay ? (name) => lookup(name) ?? REPLAY_KEY : lookup, replay);
  const config = toConfig(values, replay ? offline(declared) : declared);
  return { config, entries, configFile, ...(upstreamsFile ? { upstreamsFile } : {}) };
}

/** Where the user config file lives: found without reading (or validating) anything else. */
export function configFileLocation({ flags = {}, env = process.env, cwd = process.cwd() }: LoadOptions = {}): string {
  return join(configDirOf([["flag", flags], ["env", env], [".env", readEnvFile(join(cwd, ".env"))]], env), "config.env");
}

function configDirOf(layers: [Source, Record<string, string | undefined>][], env: Record<string, string | undefined>): string {
  return pick(layers, "PARLEY_CONFIG_DIR") ?? join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config"), "parley");
}

/** PARLEY_UPSTREAMS (which must exist), else ./parley.toml, else parley.toml in the config directory. */
function upstreamsFileOf(given: string | undefined, cwd: string, configDir: string): string | undefined {
  if (given) {
    if (!existsSync(given)) throw new ConfigError(`PARLEY_UPSTREAMS=${JSON.stringify(given)}: no such file`);
    return given;
  }
  return [join(cwd, "parley.toml"), join(configDir, "parley.toml")].find((path) => existsSync(path));
}

function upstreams(v: Record<string, string | undefined>, path: string | undefined, lookup: (name: string) => string | undefined, replay = false): Declared {
  const defaults = { timeoutMs: Number(v.UPSTREAM_TIMEOUT_MS), retries: Number(v.UPSTREAM_RETRIES) };
  try {
    const file = path ? readUpstreamsFile(path, readText(path), lookup, SPEC_UPSTREAMS, replay) : undefined;
    return declareUpstreams(v, defaults, file);
  } catch (error) {
    if (error instanceof FileError) throw new ConfigError(error.message);
    throw error;
  }
}

/** The upstreams file's text, or a ConfigError saying why it cannot be read (a directory, no permission). */
function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

function toConfig(v: Record<string, string | undefined>, declared: Declared): Config {
  const num = (key: string) => Number(v[key]);
  const production = v.ENVIRONMENT!.toLowerCase() === "production";
  return {
    host: v.HOST!,
    port: num("PORT"),
    workers: num("WORKERS"),
    logLevel: LOG_LEVELS[v.LOG_LEVEL!.toLowerCase()]!,
    logFormat: v.LOG_FORMAT!.toLowerCase() === "json" ? "json" : "text",
    environment: v.ENVIRONMENT!.toLowerCase(),
    debug: BOOLEANS[v.DEBUG!.toLowerCase()]!,
    corsOrigins: production ? splitList(v.CORS_ORIGINS ?? "") : "*",
    apiKey: v.API_KEY,
    apiKeys: splitList(v.API_KEYS ?? "").map((item) => parseKeyEntry(item)!),
    ...(v.INGRESS_AWS_CREDENTIALS ? { ingressAwsCredentials: ingressCredentials(v.INGRESS_AWS_CREDENTIALS) } : {}),
    ...(v.DEFAULT_ALPHA_MODEL ? { defaultModel: v.DEFAULT_ALPHA_MODEL } : {}),
    upstreams: declared,
    files: {
      bucket: v.OBJSTORE_FILES_BUCKET,
      endpointUrl: v.OBJSTORE_ENDPOINT_URL,
      maxUploadBytes: num("MAX_UPLOAD_BYTES"),
      contextMaxChars: num("FILE_CONTEXT_MAX_CHARS"),
      aws: s3Credentials(v),
    },
    modelAliases: new Map(splitList(v.MODEL_ALIASES ?? "").map((item) => splitOnce(item, "="))),
    modelRoutes: splitList(v.MODEL_ROUTES ?? "").map((item) => {
      const [pattern, name] = splitOnce(item, "=");
      const upstream = upstreamNamed(name, declared.upstreams);
      if (!declared.upstreams.some((u) => u.name === upstream)) {
        throw new ConfigError(`MODEL_ROUTES=${JSON.stringify(v.MODEL_ROUTES)} is invalid: no upstream '${name}'; upstreams are ${declared.upstreams.map((u) => u.name).join(", ")}`);
      }
      return { pattern, upstream };
    }),
    modelFallbacks: new Map(splitList(v.MODEL_FALLBACKS ?? "").map((item) => {
      const [model, list] = splitOnce(item, "=");
      return [model, list.split("|")];
    })),
    rateLimitRpm: num("RATE_LIMIT_RPM"),
    usage: BOOLEANS[v.USAGE!.toLowerCase()]!,
    usageRetentionDays: num("USAGE_RETENTION_DAYS"),
    metrics: BOOLEANS[v.METRICS!.toLowerCase()]!,
    redisUrl: v.REDIS_URL,
    rateLimitOnRedisError: v.RATE_LIMIT_ON_REDIS_ERROR!.toLowerCase() as "open" | "closed",
    upstreamTimeoutMs: num("UPSTREAM_TIMEOUT_MS"),
    upstreamRetries: num("UPSTREAM_RETRIES"),
    upstreamCooldownS: num("UPSTREAM_COOLDOWN_S"),
    shutdownGraceMs: num("SHUTDOWN_GRACE_MS"),
    exitWithParent: BOOLEANS[v.PARLEY_EXIT_WITH_PARENT!.toLowerCase()]!,
    modelsRefreshS: num("MODELS_REFRESH_S"),
    ...(v.PARLEY_CASSETTES ? { cassettes: cassettesOf(v) } : {}),
    dataDir: v.PARLEY_DATA_DIR!,
    configDir: v.PARLEY_CONFIG_DIR!,
  };
}

function cassettesOf(v: Record<string, string | undefined>): CassetteSettings {
  const mode = v.PARLEY_CASSETTE_MODE!.toLowerCase() as CassetteMode;
  // Each worker keeps its own copy of a cassette in memory: two writing one file would lose entries.
  if (mode !== "replay" && Number(v.WORKERS) > 1) throw new ConfigError(`PARLEY_CASSETTE_MODE=${mode} records with one worker only (WORKERS=${v.WORKERS}); replay runs with any number`);
  return { dir: v.PARLEY_CASSETTES!, mode, pace: v.PARLEY_REPLAY_PACE!.toLowerCase() as CassetteSettings["pace"] };
}

/**
 * S3's own region and credentials when set (OBJSTORE_*), else Bedrock's (BETA_*), as the spec says.
 * The region is no credential: OBJSTORE_REGION alone keeps Bedrock's keys.
 */
function s3Credentials(v: Record<string, string | undefined>): AwsSettings & { region?: string } {
  const own = ["PROFILE", "ACCESS_KEY_ID", "SECRET_ACCESS_KEY", "SESSION_TOKEN"].some((k) => v[`OBJSTORE_${k}`] !== undefined);
  const from = (key: string) => (own ? v[`OBJSTORE_${key}`] : v[`BETA_${key}`]);
  const region = v.OBJSTORE_REGION ?? v.BETA_REGION;
  const out: AwsSettings & { region?: string } = {};
  if (region) out.region = region;
  for (const [key, name] of [["profile", "PROFILE"], ["accessKeyId", "ACCESS_KEY_ID"], ["secretAccessKey", "SECRET_ACCESS_KEY"], ["sessionToken", "SESSION_TOKEN"]] as const) {
    const value = from(name);
    if (value) out[key] = value;
  }
  return out;
}

/** Writes one variable into the user config file, keeping the others. */
export function setConfigValue(configFile: string, key: string, value: string): void {
  const setting = BY_KEY.get(key);
  if (!setting) throw new ConfigError(`${key} is not a parley setting; known: ${SETTINGS.map((s) => s.key).join(", ")}`);
  if (key === "PARLEY_CONFIG_DIR") throw new ConfigError("PARLEY_CONFIG_DIR cannot live inside the config file; set it in the environment");
  const allowed = setting.check?.(value);
  if (allowed) throw new ConfigError(`${key}=${setting.secret ? mask(value) : JSON.stringify(value)} is invalid: expected ${allowed}`);
  writeConfigFile(configFile, { ...readEnvFile(configFile), [key]: value });
}

/** Removes a setting from the user config file; false when the file did not set it. */
export function unsetConfigValue(configFile: string, key: string): boolean {
  const values = readEnvFile(configFile);
  if (!Object.hasOwn(values, key)) return false;
  delete values[key];
  writeConfigFile(configFile, values);
  return true;
}

function writeConfigFile(configFile: string, values: Record<string, string>): void {
  mkdirSync(join(configFile, ".."), { recursive: true, mode: 0o700 });
  const text = Object.entries(values).map(([k, v]) => `${k}=${quote(k, v)}\n`).join("");
  writeFileSync(configFile, text, { mode: 0o600 });
}

/** What is wrong with a value for a setting, or undefined when it is fine. */
export function checkValue(key: string, value: string): string | undefined {
  const setting = BY_KEY.get(key);
  if (!setting) return `${key} is not a parley setting`;
  const allowed = setting.check?.(value);
  return allowed ? `expected ${allowed}` : undefined;
}

/** The user config file's own values, unvalidated: what `config set` edits. */
export function readConfigFile(configFile: string): Record<string, string> {
  return readEnvFile(configFile);
}

/** Enough of a secret to tell two apart, never enough to use. */
export function mask(value: string): string {
  return value.length >= 16 ? `****${value.slice(-4)}` : "****";
}

function pick(layers: [Source, Record<string, string | undefined>][], key: string): string | undefined {
  for (const [, values] of layers) if (values[key]?.trim()) return values[key]!.trim();
}

function readEnvFile(path: string): Record<string, string> {
  return existsSync(path) ? parseDotenv(readFileSync(path)) : {};
}

/** dotenv takes quoted text literally, with no escapes: pick a quote the value does not contain. */
function quote(key: string, value: string): string {
  const q = ["'", '"', "`"].find((q) => !value.includes(q));
  if (!q) throw new ConfigError(`${key} cannot hold all three quote characters (' " \`) in a config file`);
  return q + value + q;
}

const KEY_ENTRY = /^(?:([A-Za-z0-9_.-]{1,64})=)?([^:\s]+):([^@\s]+?)(?:@(\d+(?:\.\d+)?)(tokens|usd)\/day)?$/;

/** One `API_KEYS` entry, or undefined when it does not fit the grammar. */
function parseKeyEntry(item: string): KeyEntry | undefined {
  const match = KEY_ENTRY.exec(item);
  if (!match) return undefined;
  const [, name, key, scopeList, amount, unit] = match;
  const scopes = scopeList!.split("+");
  if (!scopes.every((s) => SCOPES.includes(s as Scope))) return undefined;
  return {
    key: key!,
    scopes: scopes as Scope[],
    ...(name ? { name } : {}),
    ...(amount ? { budget: { amount: Number(amount), unit: unit as Budget["unit"] } } : {}),
  };
}

/** Every entry fits the grammar, and names are unique and not `main` (API_KEY's label). */
function checkKeyEntries(value: string): string | undefined {
  const entries = splitList(value).map(parseKeyEntry);
  if (entries.some((e) => !e || (e.budget && !(e.budget.amount > 0)))) return KEY_SHAPE;
  const names = entries.map((e) => e!.name).filter((n): n is string => n !== undefined);
  if (names.includes("main") || names.some((n) => n.startsWith("key-"))) return `${KEY_SHAPE}; the names "main" and "key-…" are parley's own labels`;
  if (new Set(names).size < names.length) return `${KEY_SHAPE}, each name used once`;
}

function splitList(value: string): string[] {
  return value.split(",").map((s) => s.trim()).filter(Boolean);
}

function splitOnce(item: string, sep: string): [string, string] {
  const at = item.indexOf(sep);
  return [item.slice(0, at).trim(), item.slice(at + 1).trim()];
}

function ingressCredentials(value: string): { accessKeyId: string; secretAccessKey: string } {
  const at = value.indexOf(":");
  return { accessKeyId: value.slice(0, at), secretAccessKey: value.slice(at + 1) };
}
