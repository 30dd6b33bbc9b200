/**
 * The span the edge and the core hold: a SERVER span per request, a CLIENT span per upstream call.
 * Ending a span hands it to its sink (queue for export, metrics); nothing is encoded or sent here.
 */
import type { Usage } from "../ir.ts";
import { ATTR, type AttributeName, type AttributeValue, type Attributes } from "./names.ts";
import { type SpanContext, formatTraceparent, randomHex } from "./traceparent.ts";

export const SPAN_KIND_SERVER = 2;
export const SPAN_KIND_CLIENT = 3;
export const STATUS_UNSET = 0;
export const STATUS_ERROR = 2;
// Span.flags in OTLP: the W3C flags, then "is-remote is known" and "the parent is remote".
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

export interface Span {
  /** The header to send upstream for this span; undefined on the no-op span (forward the client's). */
  readonly traceparent: string | undefined;
  set(name: AttributeName, value: AttributeValue | null | undefined): Span;
  setAll(attrs: Attributes): Span;
  /** The four token counts, input including the cached ones as the conventions count it. */
  usage(usage: Usage): Span;
  /** Prompt and reply, kept only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true. */
  messages(input: unknown, output: unknown): Span;
  /** The first token went out to the client (SERVER) or came in from the upstream (CLIENT). */
  firstToken(): void;
  /** `errorType`: parley's error type or the upstream's status, as `error.type` wants a low-cardinality class. */
  fail(errorType: string, message?: string): void;
  /** A CLIENT span for one upstream call; retries and failovers are each a child of the same parent. */
  child(attrs?: Attributes): Span;
  end(): void;
}

/** What the exporter and the metrics read of an ended span. */
export interface SpanData {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly otlpFlags: number;
  readonly kind: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly firstTokenMs: number;
  readonly attrs: ReadonlyMap<string, AttributeValue>;
  readonly statusCode: number;
  readonly statusMessage: string;
  readonly sampled: boolean;
  readonly name: string;
}

export interface SpanSink {
  readonly captureContent: boolean;
  /** False when only metrics are exported: the client's traceparent then goes upstream unchanged. */
  readonly tracing: boolean;
  ended(span: SpanData): void;
}

// Read once: `performance.timeOrigin` is a getter into native code, and spans read the time four times a request.
const ORIGIN = performance.timeOrigin;
export const now = () => ORIGIN + performance.now();

export class RecordingSpan implements Span, SpanData {
  readonly spanId = randomHex(8);
  readonly startMs = now();
  endMs = 0;
  firstTokenMs = 0;
  readonly attrs = new Map<string, AttributeValue>();
  statusCode = STATUS_UNSET;
  statusMessage = "";
  readonly otlpFlags: number;
  private header: string | undefined;

  constructor(
    private readonly sink: SpanSink,
    readonly kind: number,
    readonly traceId: string,
    readonly parentSpanId: string | undefined,
    readonly sampled: boolean,
    remoteParent: boolean,
  ) {
    this.otlpFlags = (sampled ? 1 : 0) | HAS_IS_REMOTE | (remoteParent ? IS_REMOTE : 0);
  }

  get traceparent(): string | undefined {
    if (!this.sink.tracing) return undefined;
    this.header ??= formatTraceparent(this.context());
    return this.header;
  }

  context(): SpanContext {
    return { traceId: this.traceId, spanId: this.spanId, flags: this.sampled ? 1 : 0 };
  }

  get name(): string {
    const op = this.attrs.get(ATTR.operation) ?? "";
    const model = this.attrs.get(ATTR.requestModel);
    return model === undefined ? String(op) : `${op} ${model}`;
  }

  set(name: AttributeName, value: AttributeValue | null | undefined): this {
    if (value !== null && value !== undefined && !this.endMs) this.attrs.set(name, value);
    return this;
  }

  setAll(attrs: Attributes): this {
    for (const key in attrs) this.set(key as AttributeName, attrs[key as AttributeName]);
    return this;
  }

  usage(usage: Usage): this {
    return this.set(ATTR.inputTokens, usage.input.total)
      .set(ATTR.outputTokens, usage.output)
      .set(ATTR.cacheReadTokens, usage.input.cacheRead)
      .set(ATTR.cacheWriteTokens, usage.input.cacheWrite);
  }

  messages(input: unknown, output: unknown): this {
    if (!this.sink.captureContent) return this;
    if (input !== undefined) this.set(ATTR.inputMessages, JSON.stringify(input));
    if (output !== undefined) this.set(ATTR.outputMessages, JSON.stringify(output));
    return this;
  }

  firstToken(): void {
    if (!this.firstTokenMs) this.firstTokenMs = now();
  }

  fail(errorType: string, message?: string): void {
    if (this.endMs) return;
    this.attrs.set(ATTR.errorType, errorType);
    this.statusCode = STATUS_ERROR;
    this.statusMessage = message ?? "";
  }

  child(attrs?: Attributes): Span {
    const span = new RecordingSpan(this.sink, SPAN_KIND_CLIENT, this.traceId, this.spanId, this.sampled, false);
    const op = this.attrs.get(ATTR.operation);
    if (op !== undefined) span.attrs.set(ATTR.operation, op);
    if (attrs) span.setAll(attrs);
    return span;
  }

  end(): void {
    if (this.endMs) return;
    this.endMs = now();
    this.sink.ended(this);
  }
}

/** The span when telemetry is off: one constant object, nothing allocated per request. */
export const NOOP_SPAN: Span = Object.freeze({
  traceparent: undefined,
  set: () => NOOP_SPAN,
  setAll: () => NOOP_SPAN,
  usage: () => NOOP_SPAN,
  messages: () => NOOP_SPAN,
  firstToken() {},
  fail() {},
  child: () => NOOP_SPAN,
  end() {},
});
