/**
 * The same requests in OTLP/JSON: the protobuf JSON mapping with OTLP's exceptions (trace and span
 * ids as hex, enums as numbers, 64-bit integers as decimal strings).
 */
import type { GenAiMetrics } from "./metrics.ts";
import { type AttributeValue, DOUBLE_ATTRIBUTES, SCHEMA_URL } from "./names.ts";
import { type Origin, nanos } from "./otlp-proto.ts";
import type { SpanData } from "./span.ts";

export function tracesToJson(origin: Origin, spans: readonly SpanData[]): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: resource(origin),
        scopeSpans: [
          {
            scope: origin.scope,
            spans: spans.map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              flags: s.otlpFlags,
              name: s.name,
              kind: s.kind,
              startTimeUnixNano: nanos(s.startMs),
              endTimeUnixNano: nanos(s.endMs),
              attributes: attributes(s.attrs),
              ...(s.statusCode ? { status: { code: s.statusCode, ...(s.statusMessage ? { message: s.statusMessage } : {}) } } : {}),
            })),
            schemaUrl: SCHEMA_URL,
          },
        ],
      },
    ],
  });
}

export function metricsToJson(origin: Origin, metrics: GenAiMetrics, nowMs: number): string {
  const startTimeUnixNano = nanos(metrics.startMs);
  const timeUnixNano = nanos(nowMs);
  return JSON.stringify({
    resourceMetrics: [
      {
        resource: resource(origin),
        scopeMetrics: [
          {
            scope: origin.scope,
            metrics: metrics.all
              .filter((h) => h.points.length)
              .map((h) => ({
                name: h.name,
                description: h.description,
                unit: h.unit,
                histogram: {
                  aggregationTemporality: 2,
                  dataPoints: h.points.map((p) => ({
                    attributes: attributes(p.attrs),
                    startTimeUnixNano,
                    timeUnixNano,
                    count: String(p.count),
                    sum: p.sum,
                    bucketCounts: p.counts.map(String),
                    explicitBounds: h.bounds,
                    min: p.min,
                    max: p.max,
                  })),
                },
              })),
            schemaUrl: SCHEMA_URL,
          },
        ],
      },
    ],
  });
}

const resource = (origin: Origin) => ({ attributes: attributes(Object.entries(origin.resource)) });

function attributes(entries: Iterable<readonly [string, AttributeValue]>) {
  const out = [];
  for (const [key, v] of entries) out.push({ key, value: anyValue(key, v) });
  return out;
}

function anyValue(key: string, v: AttributeValue): object {
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  if (typeof v === "number") return Number.isSafeInteger(v) && !DOUBLE_ATTRIBUTES.has(key) ? { intValue: String(v) } : { doubleValue: v };
  return { arrayValue: { values: v.map((s) => ({ stringValue: s })) } };
}
