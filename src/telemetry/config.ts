/**
 * The standard OTEL_* variables, read once at start-up. Telemetry is off (null) unless an OTLP
 * endpoint is set. As the OpenTelemetry specification asks, a malformed value is ignored with a
 * warning and its default used: a typo in telemetry settings never stops the gateway.
 */
import { type SamplerConfig, parseSampler } from "./sampler.ts";

export type Protocol = "http/protobuf" | "http/json";

export interface SignalConfig {
  url: string;
  protocol: Protocol;
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface OtelConfig {
  traces: SignalConfig | null;
  metrics: SignalConfig | null;
  resource: Record<string, string>;
  sampler: SamplerConfig;
  scheduleDelayMs: number;
  exportTimeoutMs: number;
  maxQueueSize: number;
  maxExportBatchSize: number;
  metricIntervalMs: number;
  metricTimeoutMs: number;
  captureContent: boolean;
}

type Env = Record<string, string | undefined>;

export function readOtelConfig(env: Env, serviceVersion?: string): { config: OtelConfig | null; warnings: string[] } {
  const warnings: string[] = [];
  if (truthy(env.OTEL_SDK_DISABLED)) return { config: null, warnings };
  const traces = signal(env, "TRACES", "v1/traces", warnings);
  const metrics = signal(env, "METRICS", "v1/metrics", warnings);
  if (!traces && !metrics) return { config: null, warnings };

  const int = (name: string, fallback: number, min = 0) => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const n = Number(raw);
    if (Number.isInteger(n) && n >= min) return n;
    warnings.push(`${name}=${raw} is not a whole number >= ${min}; using ${fallback}`);
    return fallback;
  };
  const maxQueueSize = int("OTEL_BSP_MAX_QUEUE_SIZE", 2048, 1);
  const config: OtelConfig = {
    traces,
    metrics,
    resource: resource(env, serviceVersion, warnings),
    sampler: parseSampler(env.OTEL_TRACES_SAMPLER, env.OTEL_TRACES_SAMPLER_ARG, warnings),
    scheduleDelayMs: int("OTEL_BSP_SCHEDULE_DELAY", 5000),
    exportTimeoutMs: int("OTEL_BSP_EXPORT_TIMEOUT", 30000, 1),
    maxQueueSize,
    maxExportBatchSize: Math.min(int("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, 1), maxQueueSize),
    metricIntervalMs: int("OTEL_METRIC_EXPORT_INTERVAL", 60000, 1),
    metricTimeoutMs: int("OTEL_METRIC_EXPORT_TIMEOUT", 30000, 1),
    captureContent: truthy(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT),
  };
  // Both signals read the shared variables: one warning each, not one per signal.
  return { config, warnings: [...new Set(warnings)] };
}

/** A signal's endpoint: its own variable as a full URL, else the base endpoint plus the signal's path. */
function signal(env: Env, name: "TRACES" | "METRICS", path: string, warnings: string[]): SignalConfig | null {
  if (env[`OTEL_${name}_EXPORTER`]?.trim().toLowerCase() === "none") return null;
  const own = env[`OTEL_EXPORTER_OTLP_${name}_ENDPOINT`]?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const url = own || (base ? `${base.replace(/\/+$/, "")}/${path}` : "");
  if (!url) return null;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    warnings.push(`the OTLP ${name.toLowerCase()} endpoint ${url} is not an http(s) URL; ${name.toLowerCase()} are not exported`);
    return null;
  }
  const pick = (suffix: string) => env[`OTEL_EXPORTER_OTLP_${name}_${suffix}`]?.trim() || env[`OTEL_EXPORTER_OTLP_${suffix}`]?.trim();
  const proto = pick("PROTOCOL") ?? "http/protobuf";
  let protocol: Protocol = "http/protobuf";
  if (proto === "http/json") protocol = "http/json";
  else if (proto !== "http/protobuf") warnings.push(`OTLP protocol ${proto} is not supported (http/protobuf, http/json); using http/protobuf`);
  const timeout = Number(pick("TIMEOUT") ?? 10000);
  return {
    url,
    protocol,
    headers: keyValues(pick("HEADERS") ?? "", "OTEL_EXPORTER_OTLP_HEADERS", warnings),
    timeoutMs: Number.isInteger(timeout) && timeout > 0 ? timeout : 10000,
  };
}

function resource(env: Env, serviceVersion: string | undefined, warnings: string[]): Record<string, string> {
  // Each process (a worker under the supervisor too) is its own instance: its cumulative metric
  // series must not be taken for another's.
  const attrs: Record<string, string> = { "service.name": "parley", "service.instance.id": crypto.randomUUID() };
  if (serviceVersion) attrs["service.version"] = serviceVersion;
  Object.assign(attrs, keyValues(env.OTEL_RESOURCE_ATTRIBUTES ?? "", "OTEL_RESOURCE_ATTRIBUTES", warnings));
  const service = env.OTEL_SERVICE_NAME?.trim();
  if (service) attrs["service.name"] = service;
  attrs["telemetry.sdk.name"] = "parley";
  attrs["telemetry.sdk.language"] = "nodejs";
  return attrs;
}

/** `k1=v1,k2=v2` with percent-encoded values (the W3C Baggage form the specification names). */
export function keyValues(raw: string, what: string, warnings: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of raw.split(",")) {
    if (!part.trim()) continue;
    const eq = part.indexOf("=");
    const key = eq > 0 ? part.slice(0, eq).trim() : "";
    let value: string | undefined;
    try {
      value = eq > 0 ? decodeURIComponent(part.slice(eq + 1).trim()) : undefined;
    } catch {
      value = undefined;
    }
    // The value may be a secret (an authorization header): the warning names the key only.
    if (!key || value === undefined) warnings.push(`${what}: an entry ${key ? `for ${key} ` : ""}is not key=value; it is ignored`);
    else out[key] = value;
  }
  return out;
}

const truthy = (v: string | undefined) => v?.trim().toLowerCase() === "true";
