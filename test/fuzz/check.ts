import type { FuzzCase, ReplyFormat } from "./cases.ts";

/** What every answer must be, whatever was sent (contract 3, 9 and 10; issue 12). */

const PARLEY_TYPES = new Set(["invalid_request_error", "authentication_error", "permission_error", "not_found_error", "validation_error", "rate_limit_error", "internal_server_error", "service_unavailable_error"]);
const ANTHROPIC_TYPES = new Set(["invalid_request_error", "authentication_error", "permission_error", "not_found_error", "request_too_large", "rate_limit_error", "api_error", "overloaded_error"]);
/** Statuses a gateway may answer with: its own 4xx, and 502/503/504 for upstreams that fail. */
const STATUSES = new Set([200, 201, 204, 400, 401, 403, 404, 405, 413, 415, 422, 429, 502, 503, 504, 529]);

export interface Outcome {
  status: number;
  problems: string[];
  /** Known limits outside parley's reach, counted but not failures. */
  notes?: string[];
  /** Milliseconds until the whole body was read. */
  ms: number;
}

/** Reads the whole response (within `timeoutMs`) and lists what is wrong with it. */
export async function check(c: FuzzCase, response: Response, secrets: string[], timeoutMs: number, started = performance.now()): Promise<Outcome> {
  const problems: string[] = [];
  const { status } = response;
  const text = await readAll(response, timeoutMs - (performance.now() - started));
  const ms = performance.now() - started;
  if (text === undefined) return { status, problems: [`hang: body not finished within ${timeoutMs} ms`], ms };
  // Bun's HTTP server refuses a request line and headers over 16 KiB itself, before any handler runs.
  if (status === 431 && text === "") return { status, problems: [], notes: ["Bun's own 431 for headers over 16 KiB"], ms };
  // Bun's own 413 for a body over maxRequestBodySize (MAX_UPLOAD_BYTES + 1 MiB): issue 12 item 8, done on the serving branch.
  if (status === 413 && text === "" && !response.headers.get("x-request-id")) return { status, problems: [], notes: ["Bun's own 413 for a body over the server's limit"], ms };

  if (status === 500) problems.push("status 500");
  else if (!STATUSES.has(status)) problems.push(`unexpected status ${status}`);
  if (status >= 500 && !c.faulty) problems.push(`${status} for a request whose upstream was healthy`);
  if (c.valid && status >= 400) problems.push(`a valid request was refused with ${status}`);
  if (!response.headers.get("x-request-id")) problems.push("no x-request-id header");

  const headerText = [...response.headers].map(([k, v]) => `${k}: ${v}`).join("\n");
  for (const secret of secrets) {
    if (text.includes(secret)) problems.push(`secret ${mask(secret)} in the body`);
    if (headerText.includes(secret)) problems.push(`secret ${mask(secret)} in a header`);
  }

  const type = response.headers.get("content-type") ?? "";
  if (c.method === "HEAD") return { status, problems, ms };
  if (status >= 400) problems.push(...envelopeProblems(c, text, type));
  if (c.expectModel && response.headers.get("x-parley-model") !== c.expectModel) problems.push(`answered by ${response.headers.get("x-parley-model")}, not the fallback ${c.expectModel}`);
  if (status >= 400) return { status, problems, ms };
  if (type.includes("text/event-stream")) {
    const ending = streamEnding(c.reply, text, c.relayed);
    problems.push(...ending.problems);
    if (c.expectFailure && !ending.failed) problems.push("a broken upstream stream passed as complete");
  } else {
    if (type.includes("json")) problems.push(...replyProblems(c.reply, text));
    if (c.expectFailure) problems.push(`a broken upstream reply passed as a ${status}`);
  }
  return { status, problems, ms };
}

async function readAll(response: Response, ms: number): Promise<string | undefined> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let timer: Timer | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), Math.max(1, ms))));
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), late]);
      if (next === "late") {
        reader.cancel().catch(() => {});
        return undefined;
      }
      if (next.done) return text + decoder.decode();
      // In process (app.handle), Elysia's event streams hand on strings; over HTTP they are bytes.
      const chunk: unknown = next.value;
      text += typeof chunk === "string" ? chunk : decoder.decode(chunk as Uint8Array, { stream: true });
    }
  } catch (error) {
    // A connection that breaks is an answer that never ended properly.
    return `${text}\n<<read failed: ${error instanceof Error ? error.message : String(error)}>>`;
  } finally {
    clearTimeout(timer);
  }
}

function envelopeProblems(c: FuzzCase, text: string, type: string): string[] {
  if (!type.includes("application/json")) return [`error body is ${type || "untyped"}, not JSON: ${text.slice(0, 80)}`];
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return [`error body is not JSON: ${text.slice(0, 80)}`];
  }
  const error = body?.error;
  switch (c.dialect) {
    case "parley":
      if (!error || typeof error.message !== "string" || !PARLEY_TYPES.has(error.type)) return [`not parley's envelope: ${text.slice(0, 120)}`];
      if (error.details !== undefined && typeof error.details !== "string") return ["error.details is not a string"];
      return [];
    case "anthropic":
      if (body?.type !== "error" || !error || typeof error.message !== "string" || !ANTHROPIC_TYPES.has(error.type)) return [`not Anthropic's envelope: ${text.slice(0, 120)}`];
      return [];
    case "openai":
      if (!error || typeof error.message !== "string" || typeof error.type !== "string" || !("param" in error) || !("code" in error)) return [`not OpenAI's envelope: ${text.slice(0, 120)}`];
      return [];
    case "gemini":
      if (!error || typeof error.message !== "string" || typeof error.code !== "number" || typeof error.status !== "string") return [`not Gemini's envelope: ${text.slice(0, 120)}`];
      return [];
  }
}

interface Event {
  event?: string;
  data: unknown;
}

function parseSse(text: string, relayed = false): { events: Event[]; problems: string[] } {
  const problems: string[] = [];
  const events: Event[] = [];
  for (const block of text.replaceAll("\r\n", "\n").split("\n\n")) {
    if (!block.trim()) continue;
    const lines = block.split("\n").filter((l) => !l.startsWith(":"));
    if (lines.length === 0) continue;
    const event = lines.find((l) => l.startsWith("event:"))?.slice(6).trim();
    const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
    if (data === "[DONE]") {
      events.push({ event, data });
      continue;
    }
    try {
      events.push({ event, data: JSON.parse(data) });
    } catch {
      // A relayed stream is the upstream's own bytes: parley checks only how it ends.
      if (!relayed) problems.push(`stream event is not JSON: ${block.slice(0, 80)}`);
      events.push({ event, data });
    }
  }
  return { events, problems };
}

export const streamProblems = (format: ReplyFormat, text: string, relayed = false) => streamEnding(format, text, relayed).problems;

/** Every stream ends with its dialect's last event or its error event (contract 2, Streaming; 10); `failed` when the latter. */
export function streamEnding(format: ReplyFormat, text: string, relayed = false): { problems: string[]; failed: boolean } {
  if (text.includes("<<read failed")) return { problems: [`stream broke without an ending: ${text.slice(-120)}`], failed: true };
  const { events, problems } = parseSse(text, relayed);
  const last = events.at(-1);
  if (!last) return { problems: [...problems, "empty stream"], failed: true };
  const data = last.data as any;
  const isError = (data && typeof data === "object" && "error" in data) || last.event === "error";
  const ended = (() => {
    switch (format) {
      case "alpha":
        return data === "[DONE]" || isError;
      case "beta_messages":
        return last.event === "message_stop" || data?.type === "message_stop" || (last.event === "error" && data?.type === "error");
      case "beta_textgen":
        return (typeof data?.completionReason === "string" && data.completionReason !== "") || isError;
      case "responses":
        return ["response.completed", "response.failed", "response.incomplete", "error"].includes(data?.type ?? last.event);
      case "gemini":
        // Gemini's stream has no closing event: its last chunk carries the finish reason.
        return typeof data?.candidates?.[0]?.finishReason === "string" || isError;
      default:
        return data === "[DONE]" || isError || last.event === "message_stop" || (typeof data?.completionReason === "string" && data.completionReason !== "");
    }
  })();
  if (!ended) problems.push(`${format} stream ended without its last event: ${JSON.stringify(last).slice(0, 120)}`);
  return { problems, failed: isError };
}

/** A 200 JSON reply has the shape its format promises: never an upstream's garbage handed on. */
function replyProblems(format: ReplyFormat, text: string): string[] {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return [`200 reply is not JSON: ${text.slice(0, 80)}`];
  }
  const wrong = (() => {
    switch (format) {
      case "alpha":
        return !Array.isArray(body?.choices) || body.choices.length === 0 || typeof body.choices[0]?.message !== "object" || body.choices[0].message === null;
      case "beta_messages":
        return body?.type !== "message" || !Array.isArray(body.content) || body.content.some((b: any) => b?.type === "tool_use" && (typeof b.name !== "string" || !b.name));
      case "beta_textgen":
        return !Array.isArray(body?.results) || typeof body.results[0]?.outputText !== "string";
      case "responses":
        return body?.object !== "response" || !Array.isArray(body.output);
      case "count_tokens":
        return !Number.isInteger(body?.input_tokens);
      case "gemini":
        return !Array.isArray(body?.candidates) && !Number.isInteger(body?.totalTokens);
      default:
        return body === null || typeof body !== "object";
    }
  })();
  return wrong ? [`200 reply has the wrong shape for ${format}: ${text.slice(0, 120)}`] : [];
}

export const mask = (secret: string) => `${secret.slice(0, 4)}…`;
