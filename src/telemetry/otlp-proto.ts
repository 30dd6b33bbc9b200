/** ExportTraceServiceRequest and ExportMetricsServiceRequest in protobuf (opentelemetry-proto v1). */
import type { GenAiMetrics } from "./metrics.ts";
import { ATTR, type AttributeValue, DOUBLE_ATTRIBUTES, SCHEMA_URL } from "./names.ts";
import { ProtoWriter } from "./protobuf.ts";
import type { SpanData } from "./span.ts";

export interface Origin {
  resource: Record<string, string>;
  scope: { name: string; version: string };
}

/** Milliseconds since the epoch (with microseconds) as whole microseconds. */
const micros = (ms: number) => Math.round(ms * 1000);

/** The same as a decimal string of nanoseconds, for OTLP/JSON. */
export const nanos = (ms: number) => `${micros(ms)}000`;

export function tracesToProto(origin: Origin, spans: readonly SpanData[]): Uint8Array {
  const w = new ProtoWriter(1024 + spans.length * 768);
  w.fork(1); // ResourceSpans
  resource(w, origin);
  w.fork(2); // ScopeSpans
  scope(w, origin);
  for (const s of spans) {
    w.fork(2).hexBytes(1, s.traceId).hexBytes(2, s.spanId);
    if (s.parentSpanId) w.hexBytes(4, s.parentSpanId);
    w.string(5, s.name).uint(6, s.kind).nanos(7, micros(s.startMs)).nanos(8, micros(s.endMs));
    for (const [k, v] of s.attrs) keyValue(w, 9, k, v);
    if (s.statusCode) w.fork(15).string(2, s.statusMessage).uint(3, s.statusCode).close();
    w.fixed32(16, s.otlpFlags).close();
  }
  w.string(3, SCHEMA_URL).close();
  return w.close().finish();
}

export function metricsToProto(origin: Origin, metrics: GenAiMetrics, nowMs: number): Uint8Array {
  const w = new ProtoWriter(16384);
  w.fork(1); // ResourceMetrics
  resource(w, origin);
  w.fork(2); // ScopeMetrics
  scope(w, origin);
  const start = micros(metrics.startMs);
  const time = micros(nowMs);
  for (const h of metrics.all) {
    if (!h.points.length) continue;
    w.fork(2).string(1, h.name).string(2, h.description).string(3, h.unit);
    w.fork(9); // Histogram
    for (const p of h.points) {
      w.fork(1);
      for (const [k, v] of p.attrs) keyValue(w, 9, k, v);
      w.nanos(2, start).nanos(3, time).fixed64(4, p.count).double(5, p.sum);
      w.packedFixed64(6, p.counts).packedDouble(7, h.bounds).double(11, p.min).double(12, p.max);
      w.close();
    }
    w.uint(2, 2).close().close(); // AGGREGATION_TEMPORALITY_CUMULATIVE
  }
  w.string(3, SCHEMA_URL).close();
  return w.close().finish();
}

function resource(w: ProtoWriter, origin: Origin): void {
  w.fork(1);
  for (const k in origin.resource) keyValue(w, 1, k, origin.resource[k]!);
  w.close();
}

function scope(w: ProtoWriter, origin: Origin): void {
  w.fork(1).string(1, origin.scope.name).string(2, origin.scope.version).close();
}

// Most attributes repeat from span to span (operation, provider, model, upstream, route, key
// label): each such pair is encoded once and copied after. Ids and message text are never kept,
// and each key keeps a bounded number of values.
const encoded = new Map<string, Map<string, Uint8Array>>();
const KEPT_PER_KEY = 256;
const NEVER_KEPT: ReadonlySet<string> = new Set([ATTR.responseId, ATTR.session, ATTR.inputMessages, ATTR.outputMessages]);

function keyValue(w: ProtoWriter, field: number, key: string, value: AttributeValue): void {
  const kept = typeof value === "string" && !NEVER_KEPT.has(key) ? keptPair(key, value) : undefined;
  if (kept) w.bytes(field, kept);
  else write(w.fork(field), key, value).close();
}

function keptPair(key: string, value: string): Uint8Array | undefined {
  let byValue = encoded.get(key);
  if (!byValue) encoded.set(key, (byValue = new Map()));
  let body = byValue.get(value);
  if (!body && byValue.size < KEPT_PER_KEY) byValue.set(value, (body = write(new ProtoWriter(key.length + value.length * 3 + 16), key, value).finish().slice()));
  return body;
}

/** A KeyValue's fields. */
function write(w: ProtoWriter, key: string, value: AttributeValue): ProtoWriter {
  w.string(1, key).fork(2);
  anyValue(w, key, value);
  return w.close();
}

function anyValue(w: ProtoWriter, key: string, v: AttributeValue): void {
  if (typeof v === "string") stringValue(w, v);
  else if (typeof v === "boolean") w.bool(2, v);
  else if (typeof v === "number") {
    if (Number.isSafeInteger(v) && !DOUBLE_ATTRIBUTES.has(key)) w.int64(3, v);
    else w.double(4, v);
  } else {
    w.fork(5);
    for (const item of v) {
      w.fork(1);
      stringValue(w, item);
      w.close();
    }
    w.close();
  }
}

/** An empty string still sets the oneof, so it is written with its zero length. */
function stringValue(w: ProtoWriter, v: string): void {
  if (v) w.string(1, v);
  else w.fork(1).close();
}
