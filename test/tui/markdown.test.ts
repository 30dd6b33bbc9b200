import { expect, test } from "bun:test";
import { highlightCode } from "../../tui/highlight.ts";
import { codeBlocks, renderMarkdown } from "../../tui/markdown.ts";
import { createPaint } from "../../tui/style.ts";

const plain = createPaint(false);
const color = createPaint(true);
const strip = (lines: string[]) => lines.map((l) => l.replace(/\x1b\[[0-9;]*m/g, ""));

test("headings, emphasis, inline code, links, lists, quotes and rules without their Markdown marks", () => {
  const text = "## Steps\n\nRun *this* and **that**, ~~not~~ `npm i`, see [the docs](https://x.dev) or <https://y.dev>.\n\n1. first\n2. second\n   - nested\n\n- [x] done\n- [ ] open\n\n> careful\n\n---";
  expect(strip(renderMarkdown(text, 80, color))).toEqual([
    "Steps", "", "Run this and that, not npm i, see the docs (https://x.dev) or https://y.dev.", "",
    "1. first", "2. second", "   • nested", "", "☑ done", "☐ open", "", "│ careful", "", "─".repeat(40),
  ]);
  expect(renderMarkdown("`npm i`", 80, plain)).toEqual(["`npm i`"]);
  expect(renderMarkdown("**b**", 80, color)[0]).toBe("\x1b[1mb\x1b[22m");
  expect(renderMarkdown("a &amp; b", 80, plain)).toEqual(["a & b"]);
});

test("tables align their columns and shrink to the width, wrapping cells", () => {
  const table = "| name | count |\n|:--|--:|\n| apples | 3 |\n| kiwis | 12 |";
  expect(strip(renderMarkdown(table, 80, color))).toEqual(["name   │ count", "───────┼──────", "apples │     3", "kiwis  │    12"]);
  const wide = strip(renderMarkdown("| a | b |\n|---|---|\n| one two three four | x |", 14, color));
  for (const line of wide) expect(Bun.stringWidth(line)).toBeLessThanOrEqual(14);
  expect(wide.join(" ")).toContain("three");
});

test("paragraphs wrap at the width; code keeps its gutter when wrapped", () => {
  expect(renderMarkdown("one two three four", 10, plain).map((l) => l.trimEnd())).toEqual(["one two", "three four"]);
  expect(renderMarkdown("```\nabcdefghijkl\n```", 10, plain)).toEqual(["┌── code", "│ abcdefgh", "│ ijkl", "└──"]);
});

test("code is highlighted by language, line by line; unknown languages and NO_COLOR stay plain", () => {
  const lines = highlightCode("/* a\n b */\nconst s = \"x\";", "js", color);
  expect(lines).toHaveLength(3);
  expect(lines[0]).toBe("\x1b[90m/* a\x1b[39m");
  expect(lines[1]).toBe("\x1b[90m b */\x1b[39m");
  expect(lines[2]).toContain("\x1b[35mconst\x1b[39m");
  expect(lines[2]).toContain("\x1b[32m\"x\"\x1b[39m");
  expect(highlightCode("a < b", "no-such-language", color)).toEqual(["a < b"]);
  expect(highlightCode("const a = 1;", "js", plain)).toEqual(["const a = 1;"]);
  expect(strip(highlightCode("if a < b && c > d:", "python", color))).toEqual(["if a < b && c > d:"]);
});

test("an unfinished reply (an open fence while streaming) still renders", () => {
  expect(strip(renderMarkdown("Here:\n```py\nprint(1)", 40, color))).toEqual(["Here:", "┌── py", "│ print(1)", "└──"]);
});

test("codeBlocks finds fenced blocks, nested in lists too, in order", () => {
  expect(codeBlocks("a\n```sh\necho 1\n```\n- item\n\n  ```\n  two\n  ```\n")).toEqual(["echo 1", "two"]);
});
