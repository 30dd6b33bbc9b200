import type { Waiting } from "../use-chat.ts";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** What a busy chat says it waits for: the server's retries (counting down their wait), then the first token. */
export function waitingText(waiting: Waiting | undefined, model: string, tick: number, elapsed: string): string {
  const spin = SPINNER[tick % SPINNER.length];
  if (!waiting) return `${spin} ${model} is answering · ${elapsed}s`;
  if (waiting.kind === "first-token") return `${spin} waiting for the first token from ${model} · ${elapsed}s`;
  const left = Math.max(0, waiting.waitMs - (Date.now() - waiting.since));
  const why = `${waiting.status === 429 ? "rate limited (429)" : `upstream failed (${waiting.status})`}${waiting.retryAfter !== undefined ? `, Retry-After ${waiting.retryAfter}s` : ""}`;
  const what = left > 0 ? `retrying in ${(left / 1000).toFixed(1)}s (attempt ${waiting.attempt} of ${waiting.of})` : `attempt ${waiting.attempt} of ${waiting.of}: waiting for the first token`;
  return `${spin} ${why} · ${what} · ${elapsed}s`;
}
