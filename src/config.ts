import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { AwsSettings } from "./lib/aws.ts";
import type { LogLevel } from "./log.ts";
import type { CassetteMode, CassetteSettings } from "./cassettes/cassettes.ts";
import { offline, recordedUpstreams, REPLAY_KEY } from "./cassettes/offline.ts";
import { declareUpstreams, SPEC_UPSTREAMS, upstreamNamed, type Declared } from "./routing/upstreams.ts";
import { FileError, readUpstreamsFile, type UpstreamsFile } from "./routing/upstreams-file.ts";
import { readEnvFile } from "./config/file.ts";
import { borrowedKeys } from "./config/borrowed-keys.ts";
import { checkTrust, trustMode, type Untrusted } from "./config/trust.ts";
import { passwordIn, rememberConfigured } from "./config/secrets.ts";
import { maskSecrets, rememberSecrets } from "./secrets.ts";
import { parseKeyEntry, type KeyEntry } from "./config/keys.ts";
import { LOG_LEVELS, SETTINGS } from "./config/settings.ts";
import { BOOLEANS, ConfigError, mask, splitList, splitOnce } from "./config/values.ts";

// The settings table, the API_KEYS grammar and the user config file live in config/; their callers take them from here.
export { checkValue, readConfigFile, setConfigValue, unsetConfigValue } from "./config/file.ts";
export { SCOPES, type Budget, type KeyEntry, type Scope } from "./config/keys.ts";
export { GROUPS, SETTINGS, type Setting } from "./config/settings.ts";
export { ConfigError, mask, type Check } from "./config/values.ts";
export { trustFolder, untrustedLine, type Untrusted } from "./config/trust.ts";

/** Where a value came from, highest precedence first. */
export type Source = "flag" | "env" | ".env" | "config file" | "default";

export interface Config {
  host: string;
  port: number;
  workers: number;
  logLevel: LogLevel;
  logFormat: "text" | "json";
  environment: string;
  debug: boolean;
  /** UI: whether /ui serves the dashboard (default: only on a loopback address). */
  ui: boolean;
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
  /** Usage records kept in memory while the database is down. */
  usageBufferMax: number;
  /** Postgres for usage (and, later, keys); unset: SQLite. */
  databaseUrl: string | undefined;
  metrics: boolean;
  redisUrl: string | undefined;
  rateLimitOnRedisError: "open" | "closed";
  upstreamTimeoutMs: number;
  upstreamRetries: number;
  /** Seconds an upstream is skipped after three retryable failures in a row. */
  upstreamCooldownS: number;
  shutdownGraceMs: number;
  /** Contract 25's limits on connections and request bodies. */
  limits: Limits;
  /** serve exits when the process that started it dies (an app running parley as its sidecar). */
  exitWithParent: boolean;
  modelsRefreshS: number;
  /** serve --cassettes: upstream calls recorded to, or replayed from, HAR files in a directory. */
  cassettes?: CassetteSettings;
  dataDir: string;
  configDir: string;
}

export interface Limits {
  idleTimeoutS: number;
  bodyTimeoutS: number;
  bodyMinRate: number;
  maxConnections: number;
  upstreamMaxBytes: number;
}

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
  /** The working directory's files that were there but not read: untrusted, or changed since trusted. */
  untrusted: Untrusted[];
  /** Trusted working-directory files that point keys from elsewhere at their own URLs (contract 25). */
  warnings: string[];
  /** The upstreams file read, when there is one: watched for changes. */
  upstreamsFile?: string;
}

export function loadConfig({ flags = {}, env = process.env, cwd = process.cwd() }: LoadOptions = {}): Loaded {
  const { dotenv, untrusted, trusted } = workingDirectory(flags, env, cwd);
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
        if (allowed) {
          // A URL that does not parse may still hold a password: never quoted back.
          rememberSecrets([passwordIn(value)]);
          throw new ConfigError(maskSecrets(`${name}=${setting.secret ? mask(value) : JSON.stringify(value)} (from ${source}) is invalid: expected ${allowed}`));
        }
        return { key: setting.key, value, source, secret: !!setting.secret };
      }
    }
    return { key: setting.key, value: setting.fallback, source: "default", secret: !!setting.secret };
  });
  const values = Object.fromEntries(entries.map((e) => [e.key, e.value]));
  values.PARLEY_CONFIG_DIR = configDir;
  values.PARLEY_DATA_DIR ??= join(env.XDG_DATA_HOME || join(home, ".local", "share"), "parley");
  // Which layer each `${NAME}` of the upstreams file came from: for the warning about a trusted folder's file.
  const looked = new Map<string, Source>();
  const lookup = (name: string) => {
    for (const [source, layer] of layers) {
      if (layer[name] === undefined) continue;
      looked.set(name, source);
      return layer[name];
    }
  };
  const upstreamsFile = upstreamsFileOf(values.PARLEY_UPSTREAMS, cwd, configDir, trusted);
  // Replay calls no upstream: the file's keys may be unset (`${OPENAI_API_KEY}` in CI, where there is none).
  const replay = !!values.PARLEY_CASSETTES && values.PARLEY_CASSETTE_MODE!.toLowerCase() === "replay";
  const [declared, database] = upstreams(values, upstreamsFile, replay ? (name) => lookup(name) ?? REPLAY_KEY : lookup, replay);
  // DATABASE_URL set anywhere else wins over the upstreams file's [database] url.
  if (database && values.DATABASE_URL === undefined) values.DATABASE_URL = database.url;
  const config = toConfig(values, replay ? offline(declared, recordedUpstreams(values.PARLEY_CASSETTES!)) : declared);
  rememberConfigured(entries, config.apiKeys, config.upstreams.upstreams);
  const fromCwd = upstreamsFile !== undefined && !values.PARLEY_UPSTREAMS && upstreamsFile === join(cwd, "parley.toml");
  const warnings = borrowedKeys(entries, fromCwd ? { file: upstreamsFile, looked } : undefined, cwd);
  return { config, entries, configFile, untrusted, warnings, ...(upstreamsFile ? { upstreamsFile } : {}) };
}

/** Where the user config file lives: found without reading (or validating) anything else. */
export function configFileLocation({ flags = {}, env = process.env, cwd = process.cwd() }: LoadOptions = {}): string {
  return join(configDirOf([["flag", flags], ["env", env], [".env", workingDirectory(flags, env, cwd).dotenv]], env), "config.env");
}

/** The working directory's `.env` when trusted, and a check for its `parley.toml` (contract 25). */
function workingDirectory(flags: Record<string, string | undefined>, env: Record<string, string | undefined>, cwd: string) {
  const mode = trustMode(flags.PARLEY_TRUST_CWD ?? env.PARLEY_TRUST_CWD);
  // The trust records live in the config dir the flags and environment name: never one a .env names.
  const trustDir = configDirOf([["flag", flags], ["env", env]], env);
  const untrusted: Untrusted[] = [];
  const trusted = (path: string) => {
    const { read, untrusted: why } = checkTrust(path, mode, trustDir);
    if (why) untrusted.push(why);
    return read;
  };
  const dotenvPath = join(cwd, ".env");
  return { dotenv: trusted(dotenvPath) ? readEnvFile(dotenvPath) : {}, untrusted, trusted };
}

function configDirOf(layers: [Source, Record<string, string | undefined>][], env: Record<string, string | undefined>): string {
  return pick(layers, "PARLEY_CONFIG_DIR") ?? join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config"), "parley");
}

/** PARLEY_UPSTREAMS (which must exist), else ./parley.toml when trusted, else parley.toml in the config directory. */
function upstreamsFileOf(given: string | undefined, cwd: string, configDir: string, trusted: (path: string) => boolean): string | undefined {
  if (given) {
    if (!existsSync(given)) throw new ConfigError(`PARLEY_UPSTREAMS=${JSON.stringify(given)}: no such file`);
    return given;
  }
  const local = join(cwd, "parley.toml");
  if (trusted(local)) return local;
  return existsSync(join(configDir, "parley.toml")) ? join(configDir, "parley.toml") : undefined;
}

function upstreams(v: Record<string, string | undefined>, path: string | undefined, lookup: (name: string) => string | undefined, replay = false): [Declared, UpstreamsFile["database"]] {
  const defaults = { timeoutMs: Number(v.UPSTREAM_TIMEOUT_MS), retries: Number(v.UPSTREAM_RETRIES) };
  try {
    const file = path ? readUpstreamsFile(path, readText(path), lookup, SPEC_UPSTREAMS, replay) : undefined;
    return [declareUpstreams(v, defaults, file), file?.database];
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
    ui: v.UI ? v.UI.toLowerCase() === "on" : isLoopback(v.HOST!),
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
    usageBufferMax: num("USAGE_BUFFER_MAX"),
    databaseUrl: v.DATABASE_URL,
    metrics: BOOLEANS[v.METRICS!.toLowerCase()]!,
    redisUrl: v.REDIS_URL,
    rateLimitOnRedisError: v.RATE_LIMIT_ON_REDIS_ERROR!.toLowerCase() as "open" | "closed",
    upstreamTimeoutMs: num("UPSTREAM_TIMEOUT_MS"),
    upstreamRetries: num("UPSTREAM_RETRIES"),
    upstreamCooldownS: num("UPSTREAM_COOLDOWN_S"),
    shutdownGraceMs: num("SHUTDOWN_GRACE_MS"),
    limits: { idleTimeoutS: num("IDLE_TIMEOUT_S"), bodyTimeoutS: num("BODY_TIMEOUT_S"), bodyMinRate: num("BODY_MIN_RATE"), maxConnections: num("MAX_CONNECTIONS"), upstreamMaxBytes: num("UPSTREAM_MAX_BYTES") },
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

function pick(layers: [Source, Record<string, string | undefined>][], key: string): string | undefined {
  for (const [, values] of layers) if (values[key]?.trim()) return values[key]!.trim();
}

function ingressCredentials(value: string): { accessKeyId: string; secretAccessKey: string } {
  const at = value.indexOf(":");
  return { accessKeyId: value.slice(0, at), secretAccessKey: value.slice(at + 1) };
}

/** 127.0.0.0/8, ::1 and localhost: where only this machine's own programs can reach. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
