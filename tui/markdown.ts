import { decodeHTML } from "entities";
import { Lexer, type Token, type Tokens } from "marked";
import wrapAnsi from "wrap-ansi";
import { highlightCode } from "./highlight.ts";
import type { Paint } from "./style.ts";

/** Markdown as a terminal shows it: styled, wrapped lines of at most `width` columns. */
export function renderMarkdown(text: string, width: number, paint: Paint): string[] {
  return blocks(Lexer.lex(text, { gfm: true }), Math.max(10, width), paint);
}

/** The fenced code blocks of a reply, for /copy N. */
export function codeBlocks(text: string): string[] {
  const found: string[] = [];
  const walk = (tokens: Token[]) => {
    for (const token of tokens) {
      if (token.type === "code") found.push((token as Tokens.Code).text);
      const nested = (token as { tokens?: Token[]; items?: Token[] }).tokens ?? (token as { items?: Token[] }).items;
      if (nested) walk(nested);
    }
  };
  walk(Lexer.lex(text, { gfm: true }));
  return found;
}

export const wrap = (text: string, width: number) => wrapAnsi(text, Math.max(4, width), { hard: true, trim: false }).split("\n");

function blocks(tokens: Token[], width: number, paint: Paint): string[] {
  return tokens.flatMap((token) => block(token, width, paint));
}

function block(token: Token, width: number, paint: Paint): string[] {
  switch (token.type) {
    case "space":
      return [""];
    case "heading": {
      const { depth, tokens } = token as Tokens.Heading;
      const text = paint.bold(inline(tokens, paint));
      return wrap(depth === 1 ? paint.underline(paint.fg("magenta", text)) : depth === 2 ? paint.fg("magenta", text) : text, width);
    }
    case "paragraph":
    case "text": {
      const { tokens, text } = token as Tokens.Paragraph;
      return wrap(tokens ? inline(tokens, paint) : decodeHTML(text), width);
    }
    case "code": {
      const { text, lang } = token as Tokens.Code;
      const language = lang?.trim().split(/\s/)[0] ?? "";
      const gutter = paint.fg("yellow", "│ ");
      const body = highlightCode(text.replace(/\n$/, ""), language, paint).flatMap((line) => wrap(line, width - 2).map((part) => gutter + part));
      return [paint.dim(paint.fg("yellow", `┌── ${language || "code"}`)), ...body, paint.dim(paint.fg("yellow", "└──"))];
    }
    case "blockquote": {
      const bar = paint.fg("gray", "│ ");
      return blocks((token as Tokens.Blockquote).tokens, width - 2, paint).map((line) => bar + paint.italic(line));
    }
    case "list":
      return list(token as Tokens.List, width, paint);
    case "table":
      return table(token as Tokens.Table, width, paint);
    case "hr":
      return [paint.fg("gray", "─".repeat(Math.min(width, 40)))];
    case "html":
      return wrap(token.raw.replace(/\n$/, ""), width);
    case "def":
      return [];
    default:
      return wrap(token.raw ?? "", width);
  }
}

function list(token: Tokens.List, width: number, paint: Paint): string[] {
  const start = typeof token.start === "number" ? token.start : 1;
  const labels = token.items.map((item, i) => (item.task ? (item.checked ? "☑ " : "☐ ") : token.ordered ? `${start + i}. ` : "• "));
  const room = Math.max(...labels.map((l) => l.length));
  return token.items.flatMap((item, i) => {
    const lines = blocks(item.tokens.filter((t) => t.type !== "checkbox"), width - room, paint);
    if (token.loose && i < token.items.length - 1) lines.push("");
    return lines.map((line, j) => (j === 0 ? paint.fg("cyan", labels[i]!.padEnd(room)) : " ".repeat(room)) + line);
  });
}

function table(token: Tokens.Table, width: number, paint: Paint): string[] {
  const header = token.header.map((cell) => paint.bold(inline(cell.tokens, paint)));
  const rows = token.rows.map((row) => row.map((cell) => inline(cell.tokens, paint)));
  const count = header.length;
  const widths = header.map((cell, c) => Math.max(Bun.stringWidth(cell), ...rows.map((row) => Bun.stringWidth(row[c] ?? "")), 1));
  // Too wide for the screen: take columns down from the widest until it fits (cells then wrap).
  const room = width - 3 * (count - 1);
  while (widths.reduce((a, b) => a + b, 0) > room && Math.max(...widths) > 3) widths[widths.indexOf(Math.max(...widths))]! -= 1;
  const line = (cells: string[]) => {
    const wrapped = cells.map((cell, c) => wrap(cell, widths[c]!));
    const height = Math.max(...wrapped.map((w) => w.length));
    return Array.from({ length: height }, (_, r) =>
      wrapped.map((w, c) => align(w[r] ?? "", widths[c]!, token.align[c] ?? null)).join(paint.fg("gray", " │ ")).trimEnd(),
    );
  };
  const rule = paint.fg("gray", widths.map((w) => "─".repeat(w)).join("─┼─"));
  return [...line(header), rule, ...rows.flatMap((row) => line(Array.from({ length: count }, (_, c) => row[c] ?? "")))];
}

function align(text: string, width: number, how: "left" | "center" | "right" | null): string {
  const gap = Math.max(0, width - Bun.stringWidth(text));
  if (how === "right") return " ".repeat(gap) + text;
  if (how === "center") return " ".repeat(Math.floor(gap / 2)) + text + " ".repeat(Math.ceil(gap / 2));
  return text + " ".repeat(gap);
}

function inline(tokens: Token[], paint: Paint): string {
  return tokens.map((token) => span(token, paint)).join("");
}

function span(token: Token, paint: Paint): string {
  const nested = (token as { tokens?: Token[] }).tokens;
  switch (token.type) {
    case "strong":
      return paint.bold(inline(nested ?? [], paint));
    case "em":
      return paint.italic(inline(nested ?? [], paint));
    case "del":
      return paint.strike(inline(nested ?? [], paint));
    case "codespan":
      return paint.fg("yellow", paint.color ? decodeHTML((token as Tokens.Codespan).text) : `\`${decodeHTML((token as Tokens.Codespan).text)}\``);
    case "link": {
      const { href } = token as Tokens.Link;
      const text = inline(nested ?? [], paint);
      const plain = text.replace(/\x1b\[[0-9;]*m/g, "");
      return paint.underline(paint.fg("blue", text)) + (plain === href || href.startsWith("mailto:") ? "" : paint.fg("gray", ` (${href})`));
    }
    case "image": {
      const { href, text } = token as Tokens.Image;
      return paint.fg("gray", `[image: ${decodeHTML(text) || href}] (${href})`);
    }
    case "br":
      return "\n";
    case "checkbox":
      return "";
    case "text":
    case "escape":
      return nested ? inline(nested, paint) : decodeHTML((token as Tokens.Text).text);
    default:
      return decodeHTML(token.raw ?? "");
  }
}
