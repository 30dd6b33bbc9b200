/** Every relative link in the README, the changelog and docs/ leads to a file, and every #anchor to a heading. */
import { describe, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { anchors, docFiles, links, read, ROOT } from "./markdown.ts";

const EXTERNAL = /^(https?:|mailto:)/;

describe("documentation links", () => {
  for (const file of docFiles()) {
    test(`${file}: every relative link and anchor resolves`, () => {
      const broken: string[] = [];
      for (const { line, target } of links(read(file))) {
        if (EXTERNAL.test(target)) continue;
        const [path, anchor] = target.split("#") as [string, string | undefined];
        const resolved = path === "" ? file : relative(ROOT, normalize(join(ROOT, dirname(file), decodeURIComponent(path))));
        const full = join(ROOT, resolved);
        if (resolved.startsWith("..") || !existsSync(full)) {
          broken.push(`${file}:${line}: ${target} (no file ${resolved})`);
          continue;
        }
        if (anchor !== undefined && (!resolved.endsWith(".md") || statSync(full).isDirectory() || !anchors(read(resolved)).has(anchor))) {
          broken.push(`${file}:${line}: ${target} (no heading #${anchor} in ${resolved})`);
        }
      }
      expect(broken).toEqual([]);
    });
  }

  test("the anchors follow GitHub's rule", () => {
    const found = anchors("# Anthropic Messages (/v1/messages)\n## Usage, cost, budgets and metrics\n## A\n## A\n```\n# not a heading\n```");
    expect([...found]).toEqual(["anthropic-messages-v1messages", "usage-cost-budgets-and-metrics", "a", "a-1"]);
  });

  test("a link to a missing file or heading is found", () => {
    expect(links("see [x](docs/nowhere.md#y) and `[not](a-link.md)`")).toEqual([{ line: 1, target: "docs/nowhere.md#y" }]);
  });
});

test("the README stays a front door: at most 20 KB, the rest in docs/", () => {
  expect(Buffer.byteLength(read("README.md"))).toBeLessThanOrEqual(20 * 1024);
});

describe("the documentation speaks of parley, not of its making", () => {
  // History belongs to git and CHANGELOG.md: no "this session", "the latest run", "sessions before".
  const HISTORY = /\b(?:this|that|the|latest|previous|earlier|last|one|two|three|four|five|six|seven) sessions?\b|\bsessions? before\b|\bthe latest run\b|\bthe run before\b|\bthis change\b/i;
  for (const file of docFiles()) {
    test(file, () => {
      const lines = read(file).split("\n").map((text, i) => `${file}:${i + 1}: ${text}`);
      expect(lines.filter((l) => HISTORY.test(l))).toEqual([]);
    });
  }
});
