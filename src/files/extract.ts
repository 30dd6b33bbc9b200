import { decodeHTML } from "entities";
import Papa from "papaparse";

/** The six accepted types, and the extensions that stand for them when a client sends none. */
export const FILE_TYPES = ["text/plain", "text/csv", "application/json", "text/html", "application/xml", "text/markdown"] as const;
const BY_EXTENSION: Record<string, string> = {
  txt: "text/plain", csv: "text/csv", json: "application/json", html: "text/html", htm: "text/html",
  xml: "application/xml", md: "text/markdown", markdown: "text/markdown",
};

/** The stored type of an upload, or undefined when it is not one parley accepts. */
export function resolveType(declared: string | undefined, filename: string): string | undefined {
  const [base = "", ...params] = (declared ?? "").split(";").map((s) => s.trim());
  const media = base.toLowerCase();
  if ((FILE_TYPES as readonly string[]).includes(media)) return [media, ...params].join("; ");
  if (media === "" || media === "application/octet-stream") return BY_EXTENSION[filename.split(".").pop()?.toLowerCase() ?? ""];
  return undefined;
}

export const baseType = (contentType: string) => contentType.split(";")[0]!.trim();

/** Text a model can read, by type: JSON pretty, CSV as a table, HTML as its visible text. */
export function extractText(bytes: Uint8Array, contentType: string, complete: boolean): string {
  const text = new TextDecoder().decode(bytes);
  switch (baseType(contentType)) {
    case "application/json":
      return prettyJson(text, complete);
    case "text/csv":
      return csvTable(text);
    case "text/html":
      return visibleText(text);
    default:
      return text;
  }
}

/**
 * Indentation costs two spaces a level on every line: past this depth it would outgrow the text
 * many times over (10,000 levels of `[` became 200 million characters), so deeper JSON stays compact.
 */
const MAX_PRETTY_DEPTH = 16;

function prettyJson(text: string, complete: boolean): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const why = complete ? "it is not valid JSON" : "only its beginning was read";
    return `[Shown as text: ${why}.]\n${text}`;
  }
  return JSON.stringify(value, null, deeperThan(value, MAX_PRETTY_DEPTH) ? undefined : 2);
}

/** Whether `value` nests objects or arrays more than `limit` levels deep; iterative, so any depth is fine. */
function deeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

function csvTable(text: string): string {
  const { data } = Papa.parse<string[]>(text.trim(), { skipEmptyLines: true });
  const [header = [], ...rows] = data;
  const cell = (value: string | undefined) => (value ?? "").replaceAll("|", "\\|").replace(/\r?\n/g, " ");
  const line = (cells: string[]) => `| ${header.map((_, i) => cell(cells[i])).join(" | ")} |`;
  return [
    `Columns: ${header.join(", ")}`,
    `Rows: ${rows.length}`,
    "",
    line(header),
    `| ${header.map(() => "---").join(" | ")} |`,
    ...rows.map(line),
  ].join("\n");
}

const HIDDEN = /<(script|style|noscript|template)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
const BLOCK = /<\/?(p|div|br|li|ul|ol|h[1-6]|tr|table|section|article|header|footer|pre|blockquote)\b[^>]*>/gi;

function visibleText(html: string): string {
  const text = html
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(HIDDEN, "")
    .replace(BLOCK, "\n")
    .replace(/<[^>]+>/g, "");
  return decodeHTML(text)
    .split("\n")
    .map((l) => l.replace(/[ \t\u00a0]+/g, " ").trim())
    .filter(Boolean)
    .join("\n");
}

/** Cuts text at `max` characters, with a line saying how much was left out. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[… truncated: ${max} of ${text.length} characters shown]`;
}
