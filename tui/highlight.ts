import type { HLJSApi } from "highlight.js";
import { decodeHTML } from "entities";
import type { Color, Paint } from "./style.ts";

// highlight.js scopes, by their first part, to a terminal colour; unknown scopes stay plain.
const SCOPES = new Map<string, Color>([
  ["keyword", "magenta"], ["built_in", "cyan"], ["type", "cyan"], ["literal", "yellow"], ["number", "yellow"],
  ["string", "green"], ["regexp", "green"], ["symbol", "green"], ["char", "green"], ["comment", "gray"], ["doctag", "gray"],
  ["meta", "gray"], ["title", "blue"], ["function", "blue"], ["attr", "cyan"], ["attribute", "cyan"], ["property", "cyan"],
  ["variable", "red"], ["template-variable", "red"], ["params", "red"], ["tag", "blue"], ["name", "blue"], ["selector-tag", "magenta"],
  ["selector-class", "yellow"], ["selector-id", "yellow"], ["addition", "green"], ["deletion", "red"], ["section", "blue"], ["bullet", "yellow"],
]);

// Loaded with the first code block, not at start: registering its languages takes tens of milliseconds.
let engine: HLJSApi | undefined;
const hljs = (): HLJSApi => (engine ??= require("highlight.js/lib/common") as HLJSApi);

/** Code as terminal lines, coloured by language when highlight.js knows it; each line carries its own styles. */
export function highlightCode(code: string, language: string, paint: Paint): string[] {
  const lines = code.split("\n");
  if (!paint.color || !language || !hljs().getLanguage(language)) return lines;
  let html: string;
  try {
    html = hljs().highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return lines;
  }
  const out: string[] = [""];
  const stack: (Color | undefined)[] = [];
  for (const [, scope, close, text] of html.matchAll(/<span class="([^"]*)">|(<\/span>)|([^<]+)/g)) {
    if (scope !== undefined) stack.push(SCOPES.get(scope.replace(/^hljs-/, "").split(/[ .]/)[0]!) ?? stack.at(-1));
    else if (close) stack.pop();
    else if (text) {
      const color = stack.at(-1);
      decodeHTML(text).split("\n").forEach((part, i) => {
        if (i > 0) out.push("");
        out[out.length - 1] += color ? paint.fg(color, part) : part;
      });
    }
  }
  return out;
}
