import { clip } from "../log.ts";
import type { AccessEntry } from "./access-log.ts";

/** What a chat adds to its request's log line (never secrets or content). */
export type LogFields = Pick<AccessEntry, "model" | "provider" | "route" | "upstream_ms" | "attempts" | "broken">;

/**
 * One request's log line: fields are noted as the request goes, the line is written once the
 * answer starts (a stream's, when it starts), and `broken` noted after that writes a second line,
 * with the same request id, saying what ended the stream.
 */
export class RequestLog {
  readonly at = Date.now();
  readonly start = performance.now();
  private fields: LogFields = {};
  private written?: AccessEntry;

  constructor(
    private readonly write: (entry: AccessEntry) => void,
    private readonly method: string,
    private readonly url: string,
    readonly id: string,
  ) {}

  note(fields: LogFields): void {
    Object.assign(this.fields, fields);
    if (fields.broken && this.written) this.write({ ...this.written, ms: performance.now() - this.start, broken: fields.broken });
  }

  finish(status: number): void {
    if (this.written) return;
    const { model, provider, route, upstream_ms, attempts, broken } = this.fields;
    this.written = { at: this.at, method: this.method, url: this.url, status, ms: performance.now() - this.start, id: this.id, model: model && clip(model), provider, route, upstream_ms, attempts, broken };
    this.write(this.written);
  }
}
