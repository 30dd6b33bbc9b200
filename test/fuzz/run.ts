import type { FuzzCase } from "./cases.ts";
import { check, type Outcome } from "./check.ts";

/** Sends a request to the server under test: `app.handle` in process, or fetch to a real one. */
export type Send = (request: Request) => Promise<Response>;

export interface Failure {
  case: FuzzCase;
  status: number;
  problems: string[];
}

export interface RunReport {
  sent: number;
  byStatus: Map<number, number>;
  byEndpoint: Map<string, number>;
  failures: Failure[];
  /** Cases whose route this build does not have (native endpoints not yet merged). */
  skipped: number;
  slowestMs: number;
  notes: Map<string, number>;
}

export interface RunOptions {
  send: Send;
  secrets: string[];
  /** Longest a case may take, headers to last byte. */
  timeoutMs: number;
  concurrency: number;
  /** Endpoint names to leave out (the route is missing in this build). */
  skip?: ReadonlySet<string>;
  /** Told about each successful upload, for later GET/DELETE cases. */
  onFile?: (id: string) => void;
}

export function toRequest(base: string, c: FuzzCase): Request {
  const headers = new Headers();
  for (const [name, value] of c.headers) headers.append(name, value);
  return new Request(base + c.path, { method: c.method, headers, body: c.body as BodyInit | undefined });
}

export async function runCases(cases: FuzzCase[], options: RunOptions): Promise<RunReport> {
  const report: RunReport = { sent: 0, byStatus: new Map(), byEndpoint: new Map(), failures: [], skipped: 0, slowestMs: 0, notes: new Map() };
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]!;
      if (options.skip?.has(c.endpoint)) {
        report.skipped++;
        continue;
      }
      const outcome = await one(c, options);
      report.sent++;
      report.byStatus.set(outcome.status, (report.byStatus.get(outcome.status) ?? 0) + 1);
      report.byEndpoint.set(c.endpoint, (report.byEndpoint.get(c.endpoint) ?? 0) + 1);
      report.slowestMs = Math.max(report.slowestMs, outcome.ms);
      for (const note of outcome.notes ?? []) report.notes.set(note, (report.notes.get(note) ?? 0) + 1);
      if (outcome.problems.length) report.failures.push({ case: c, status: outcome.status, problems: outcome.problems });
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return report;
}

async function one(c: FuzzCase, options: RunOptions): Promise<Outcome> {
  const started = performance.now();
  let timer: Timer | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), options.timeoutMs)));
  try {
    const response = await Promise.race([options.send(toRequest("http://127.0.0.1", c)), late]);
    if (response === "late") return { status: 0, problems: [`hang: no response within ${options.timeoutMs} ms`], ms: options.timeoutMs };
    const outcome = await check(c, response.clone(), options.secrets, options.timeoutMs, started);
    if (c.endpoint === "files-upload" && response.status < 300) {
      const id = (await response.json().catch(() => ({})))?.id;
      if (typeof id === "string") options.onFile?.(id);
    }
    return outcome;
  } catch (error) {
    return { status: 0, problems: [`request failed: ${error instanceof Error ? error.message : String(error)}`], ms: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

/** Native endpoints are being added by others: a build without one answers 404 "No route", and the fuzz skips it. */
export async function missingRoutes(send: Send, apiKey: string, probes: { name: string; path: string }[]): Promise<Set<string>> {
  const missing = new Set<string>();
  for (const { name, path } of probes) {
    const response = await send(new Request(`http://127.0.0.1${path}`, { method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body: "{}" }));
    const text = await response.text();
    if (response.status === 404 && text.includes("No route")) missing.add(name);
  }
  return missing;
}

export const NATIVE_PROBES = [
  { name: "messages", path: "/v1/messages" },
  { name: "count_tokens", path: "/v1/messages/count_tokens" },
  { name: "responses", path: "/v1/responses" },
];

/** A failure as one line someone can act on: case id, endpoint, what was sent, what went wrong. */
export function describeFailure(f: Failure): string {
  const c = f.case;
  return `#${c.id} ${c.method} ${c.path.slice(0, 100)} [${c.endpoint}] ${c.label.slice(0, 200)} -> ${f.status}: ${f.problems.join("; ")}`;
}

export function summary(report: RunReport): string {
  const statuses = [...report.byStatus].sort(([a], [b]) => a - b).map(([s, n]) => `${s}:${n}`).join(" ");
  const endpoints = [...report.byEndpoint].sort(([a], [b]) => a.localeCompare(b)).map(([e, n]) => `${e}:${n}`).join(" ");
  const notes = [...report.notes].map(([note, n]) => `${note}: ${n}`).join("; ");
  return `${report.sent} requests (${report.skipped} skipped: route missing), ${report.failures.length} failing; statuses ${statuses}; endpoints ${endpoints}; slowest ${report.slowestMs.toFixed(0)} ms${notes ? `; notes: ${notes}` : ""}`;
}
