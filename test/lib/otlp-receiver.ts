/**
 * A real OTLP/HTTP receiver on 127.0.0.1: POST /v1/traces and /v1/metrics in protobuf or JSON,
 * decoded with protobufjs and the official opentelemetry-proto files (test/schemas/otlp), never
 * with parley's encoder. A JSON body is checked field by field against the same definitions, so a
 * misspelt field fails instead of vanishing. It can be made slow (holds every reply until
 * released) or failing (503); `deadEndpoint()` is an address nothing listens on.
 */
import { join } from "node:path";
import protobuf from "protobufjs";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  flags: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  /** The AnyValue member each attribute came as. */
  kinds: Record<string, string>;
  status: { code: number; message: string };
  resource: Record<string, unknown>;
  scope: { name: string; version: string };
  schemaUrl: string;
}

export interface ReceivedPoint {
  attributes: Record<string, unknown>;
  startNs: bigint;
  timeNs: bigint;
  count: number;
  sum: number;
  bucketCounts: number[];
  explicitBounds: number[];
  min: number;
  max: number;
}

export interface ReceivedMetric {
  name: string;
  unit: string;
  description: string;
  temporality: number;
  points: ReceivedPoint[];
  resource: Record<string, unknown>;
}

export interface ReceivedRequest {
  path: string;
  format: "protobuf" | "json";
  headers: Headers;
}

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => join(import.meta.dir, "..", "schemas", "otlp", target);
root.loadSync(["opentelemetry/proto/collector/trace/v1/trace_service.proto", "opentelemetry/proto/collector/metrics/v1/metrics_service.proto"]);
root.resolveAll();
const TRACES = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
const METRICS = root.lookupType("opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest");
const AS_OBJECT: protobuf.IConversionOptions = { longs: String, enums: Number, bytes: Array, defaults: true, oneofs: true };

export type ReceiverMode = "ok" | "slow" | "fail";

export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const metricExports: ReceivedMetric[][] = [];
  const requests: ReceivedRequest[] = [];
  const errors: string[] = [];
  let mode: ReceiverMode = "ok";
  let release: () => void = () => {};
  let held = new Promise<void>((r) => (release = r));

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const json = (req.headers.get("content-type") ?? "").startsWith("application/json");
      const body = new Uint8Array(await req.arrayBuffer());
      requests.push({ path, format: json ? "json" : "protobuf", headers: req.headers });
      if (mode === "slow") await held;
      if (mode === "fail") return new Response("unavailable", { status: 503 });
      const type = path === "/v1/traces" ? TRACES : path === "/v1/metrics" ? METRICS : null;
      if (req.method !== "POST" || !type) return new Response("not found", { status: 404 });
      try {
        const decoded = json ? fromJson(type, JSON.parse(new TextDecoder().decode(body))) : type.toObject(type.decode(body), AS_OBJECT);
        if (type === TRACES) spans.push(...readSpans(decoded));
        else metricExports.push(readMetrics(decoded));
      } catch (e) {
        errors.push(String(e));
        return new Response(String(e), { status: 400 });
      }
      return json ? Response.json({}) : new Response(new Uint8Array(0), { headers: { "content-type": "application/x-protobuf" } });
    },
  });

  return {
    /** The base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
    url: `http://127.0.0.1:${server.port}`,
    spans,
    metricExports,
    requests,
    /** Bodies that did not decode: a test expects none. */
    errors,
    setMode(next: ReceiverMode) {
      mode = next;
      if (next !== "slow") {
        release();
        held = new Promise<void>((r) => (release = r));
      }
    },
    async waitFor(what: () => boolean, ms = 20_000): Promise<void> {
      const deadline = Date.now() + ms;
      while (!what()) {
        if (errors.length) throw new Error(`OTLP receiver: a body did not decode: ${errors.join("; ")}`);
        if (Date.now() > deadline) throw new Error(`OTLP receiver: not seen within ${ms} ms (${requests.length} requests, errors: ${errors.join("; ")})`);
        await Bun.sleep(10);
      }
    },
    async stop() {
      release();
      await server.stop(true);
    },
    async [Symbol.asyncDispose]() {
      await this.stop();
    },
  };
}

/** An http URL where nothing listens: a collector that is down. */
export async function deadEndpoint(): Promise<string> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const url = `http://127.0.0.1:${s.port}`;
  await s.stop(true);
  return url;
}

/** OTLP/JSON: hex ids, otherwise the protobuf JSON mapping; every field must exist in the schema. */
function fromJson(type: protobuf.Type, body: unknown): any {
  strict(type, body, type.name);
  const withBytes = JSON.parse(JSON.stringify(body), (key, v) =>
    (key === "traceId" || key === "spanId" || key === "parentSpanId") && typeof v === "string" ? [...Buffer.from(v, "hex")] : v,
  );
  return type.toObject(type.fromObject(withBytes), AS_OBJECT);
}

function strict(type: protobuf.Type, value: unknown, at: string): void {
  if (typeof value !== "object" || value === null) throw new Error(`${at}: expected an object`);
  for (const [key, v] of Object.entries(value)) {
    const field = type.fields[key];
    if (!field) throw new Error(`${at}.${key}: no such field in ${type.fullName}`);
    const resolved = field.resolve().resolvedType;
    if (!(resolved instanceof protobuf.Type)) continue;
    for (const item of field.repeated ? (v as unknown[]) : [v]) strict(resolved, item, `${at}.${key}`);
  }
}

function attrs(list: any[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = anyValue(kv.value);
  return out;
}

/** Which AnyValue member each attribute was sent as (`intValue`, `doubleValue`, ...). */
function kinds(list: any[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of list ?? []) out[kv.key] = kv.value.value;
  return out;
}

function anyValue(v: any): unknown {
  switch (v.value) {
    case "intValue":
      return Number(v.intValue);
    case "arrayValue":
      return (v.arrayValue.values ?? []).map(anyValue);
    default:
      return v[v.value];
  }
}

const hex = (b: number[] | undefined) => Buffer.from(b ?? []).toString("hex");

function readSpans(req: any): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of req.resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        out.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: s.name,
          kind: s.kind,
          flags: s.flags,
          startNs: BigInt(s.startTimeUnixNano),
          endNs: BigInt(s.endTimeUnixNano),
          attributes: attrs(s.attributes),
          kinds: kinds(s.attributes),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
          resource: attrs(rs.resource?.attributes),
          scope: { name: ss.scope?.name ?? "", version: ss.scope?.version ?? "" },
          schemaUrl: ss.schemaUrl,
        });
  return out;
}

function readMetrics(req: any): ReceivedMetric[] {
  const out: ReceivedMetric[] = [];
  for (const rm of req.resourceMetrics ?? [])
    for (const sm of rm.scopeMetrics ?? [])
      for (const m of sm.metrics ?? [])
        out.push({
          name: m.name,
          unit: m.unit,
          description: m.description,
          temporality: m.histogram?.aggregationTemporality ?? 0,
          resource: attrs(rm.resource?.attributes),
          points: (m.histogram?.dataPoints ?? []).map((p: any) => ({
            attributes: attrs(p.attributes),
            startNs: BigInt(p.startTimeUnixNano),
            timeNs: BigInt(p.timeUnixNano),
            count: Number(p.count),
            sum: p.sum,
            bucketCounts: (p.bucketCounts ?? []).map(Number),
            explicitBounds: p.explicitBounds ?? [],
            min: p.min,
            max: p.max,
          })),
        });
  return out;
}
