/** ExportTraceServiceRequest and ExportMetricsServiceRequest in protobuf (opentelemetry-proto v1). */
import type { GenAiMetrics } from "./metrics.ts";
import { type AttributeValue, DOUBLE_ATTRIBUTES, SCHEMA_URL } from "./names.ts";
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
  const w = new ProtoWriter();
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
  const w = new ProtoWriter();
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

function keyValue(w: ProtoWriter, field: number, key: string, value: AttributeValue): void {
  w.fork(field).string(1, key).fork(2);
  anyValue(w, key, value);
  w.close().close();
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
