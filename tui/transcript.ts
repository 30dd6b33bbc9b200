import wrapAnsi from "wrap-ansi";
import type { Settings } from "./client.ts";

export interface Turn {
  id: number;
  role: "user" | "assistant" | "error" | "info";
  text: string;
  /** Elapsed time and token usage, shown under a finished reply. */
  meta?: string;
}

export interface Line {
  text: string;
  color?: "cyan" | "green" | "red" | "yellow" | "gray";
  dim?: boolean;
}

/** A turn as display lines at this width: Markdown code blocks fenced off in a gutter. */
export function layoutTurn(turn: Turn, width: number): Line[] {
  const wrap = (text: string, room: number) => wrapAnsi(text, Math.max(10, room), { hard: true, trim: false }).split("\n");
  switch (turn.role) {
    case "user":
      return [...wrap(turn.text, width - 2).map((text, i) => ({ text: `${i === 0 ? "›" : " "} ${text}`, color: "cyan" as const })), { text: "" }];
    case "error":
      return [...wrap(`✖ ${turn.text}`, width).map((text) => ({ text, color: "red" as const })), { text: "" }];
    case "info":
      return [...wrap(turn.text, width).map((text) => ({ text, color: "gray" as const })), { text: "" }];
    case "assistant": {
      const lines: Line[] = [];
      let inCode = false;
      for (const raw of turn.text.split("\n")) {
        const fence = /^\s*```(.*)$/.exec(raw);
        if (fence) {
          lines.push({ text: inCode ? "└──" : `┌── ${fence[1]?.trim() || "code"}`, color: "yellow", dim: true });
          inCode = !inCode;
        } else if (inCode) {
          for (const text of wrap(raw, width - 2)) lines.push({ text: `│ ${text}`, color: "yellow" });
        } else {
          for (const text of wrap(raw, width)) lines.push({ text });
        }
      }
      if (turn.meta) lines.push({ text: turn.meta, color: "gray", dim: true });
      lines.push({ text: "" });
      return lines;
    }
  }
}

export function toMarkdown(turns: Turn[], model: string): string {
  const body = turns
    .filter((t) => t.role === "user" || t.role === "assistant")
    .map((t) => `## ${t.role === "user" ? "You" : "Assistant"}\n\n${t.text}\n`)
    .join("\n");
  return `# Chat with ${model}\n\n_Saved by parley on ${new Date().toISOString()}_\n\n${body}`;
}

export function toJson(turns: Turn[], model: string, settings: Settings): string {
  const messages = turns.filter((t) => t.role === "user" || t.role === "assistant").map((t) => ({ role: t.role, content: t.text }));
  return `${JSON.stringify({ model, settings, saved_at: new Date().toISOString(), messages }, null, 2)}\n`;
}
