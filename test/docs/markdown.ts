import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "..", "..");

/** The documentation the tests read: the README, the changelog and every page in docs/. */
export function docFiles(): string[] {
  const pages = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => join("docs", f));
  return ["README.md", "CHANGELOG.md", ...pages];
}

export const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

/** The text outside fenced code blocks, line numbers kept (code lines become empty). */
export function prose(text: string): string[] {
  let fence: string | undefined;
  return text.split("\n").map((line) => {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker && (fence === undefined || fence === marker)) {
      fence = fence === undefined ? marker : undefined;
      return "";
    }
    return fence === undefined ? line : "";
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of prose(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

export interface Link {
  line: number;
  target: string;
}

/** The Markdown links of the prose, inline code left out. */
export function links(text: string): Link[] {
  return prose(text).flatMap((line, i) =>
    [...line.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => ({ line: i + 1, target: m[1]! })),
  );
}

/** The fenced code blocks of one language, with the line each starts on. */
export function codeBlocks(text: string, language: string): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== "```" + language) continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === "```");
    blocks.push({ line: i + 1, code: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return blocks;
}
