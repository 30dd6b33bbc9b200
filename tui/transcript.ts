import type { Message, Settings } from "./client.ts";
import { renderMarkdown, wrap } from "./markdown.ts";
import { settingsFrom } from "./settings.ts";
import type { Paint } from "./style.ts";

export interface Turn {
  id: number;
  role: "user" | "assistant" | "error" | "info";
  text: string;
  /** Elapsed time and token usage, shown under a finished reply. */
  meta?: string;
  /** Left out of later requests: the exchange failed (or was cancelled before any text). */
  excluded?: boolean;
  /** Files sent with a user turn, as `file_ids`. */
  files?: { id: string; name: string }[];
  toolCalls?: { name: string; arguments: string }[];
  /** The reply stopped at the token limit. */
  truncated?: boolean;
}

/** A turn as styled display lines at this width. */
export function layoutTurn(turn: Turn, width: number, paint: Paint): string[] {
  const note = (text: string) => wrap(paint.dim(paint.fg("gray", text)), width);
  switch (turn.role) {
    case "user": {
      const lines = wrap(turn.text, width - 2).map((text, i) => paint.fg("cyan", `${i === 0 ? "›" : " "} ${text}`));
      for (const file of turn.files ?? []) lines.push(paint.fg("gray", `  + ${file.name} (${file.id})`));
      if (turn.excluded) lines.push(...note("  not part of the conversation any more: /retry sends it again, /edit changes it"));
      return [...lines, ""];
    }
    case "error":
      return [...wrap(`✖ ${turn.text}`, width).map((text) => paint.fg("red", text)), ""];
    case "info":
      return [...wrap(turn.text, width).map((text) => paint.fg("gray", text)), ""];
    case "assistant": {
      const lines = turn.text ? renderMarkdown(turn.text, width, paint) : [];
      for (const call of turn.toolCalls ?? []) lines.push(...wrap(paint.fg("magenta", `⚙ tool call ${call.name}(${call.arguments})`), width));
      if (turn.truncated) lines.push(paint.fg("yellow", "✂ cut off at the token limit (max tokens in /settings)"));
      if (turn.meta) lines.push(...note(turn.meta));
      return [...lines, ""];
    }
  }
}

/** What goes to the server: the user and assistant turns still in the conversation. */
export function contextOf(turns: Turn[]): Message[] {
  return turns.flatMap((t): Message[] => {
    if (t.excluded || (t.role !== "user" && t.role !== "assistant")) return [];
    const calls = (t.toolCalls ?? []).map((c) => `[tool call ${c.name}(${c.arguments})]`).join("\n");
    const content = [t.text, calls].filter(Boolean).join("\n");
    return content ? [{ role: t.role, content }] : [];
  });
}

export function toMarkdown(turns: Turn[], model: string): string {
  const body = turns
    .filter((t) => t.role === "user" || t.role === "assistant")
    .map((t) => `## ${t.role === "user" ? "You" : "Assistant"}\n\n${t.text}\n`)
    .join("\n");
  return `# Chat with ${model}\n\n_Saved by parley on ${new Date().toISOString()}_\n\n${body}`;
}

export function toJson(turns: Turn[], model: string, settings: Settings): string {
  return `${JSON.stringify({ model, settings, saved_at: new Date().toISOString(), messages: contextOf(turns) }, null, 2)}\n`;
}

/** A `/save`d JSON file back as a conversation, or a sentence saying what is wrong with it. */
export function fromJson(text: string): { model?: string; settings?: Settings; messages: Message[] } | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "it is not JSON";
  }
  const file = value as { model?: unknown; settings?: unknown; messages?: unknown };
  if (!file || typeof file !== "object" || !Array.isArray(file.messages)) return "it has no \"messages\" list (was it written by /save?)";
  const messages: Message[] = [];
  for (const m of file.messages as { role?: unknown; content?: unknown }[]) {
    if (!m || (m.role !== "user" && m.role !== "assistant") || typeof m.content !== "string") return "each message needs a role (user or assistant) and text content";
    messages.push({ role: m.role, content: m.content });
  }
  return { model: typeof file.model === "string" ? file.model : undefined, settings: settingsFrom(file.settings), messages };
}
