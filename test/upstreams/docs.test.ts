import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { KINDS } from "../../src/providers/kinds.ts";
import { COMMON, readUpstreamsFile, ROUTE, TARGET } from "../../src/routing/upstreams-file.ts";
import { WHEN } from "../../src/routing/when.ts";

const root = join(import.meta.dir, "../..");
const page = readFileSync(join(root, "docs/upstreams.md"), "utf8");
const tomlBlocks = (text: string) => [...text.matchAll(/```toml\n([\s\S]*?)```/g)].map((m) => m[1]!);
const env: Record<string, string> = { OPENAI_API_KEY: "sk-x", ANTHROPIC_API_KEY: "sk-ant-x", US_KEY_ID: "a", US_SECRET: "b", EU_KEY_ID: "c", EU_SECRET: "d", OPENROUTER_API_KEY: "e", DEEPSEEK_API_KEY: "f", TEAM_A_KEY: "g", ANTHROPIC_API_KEY_2: "h", GEMINI_API_KEY: "AIza-x", PG_PASSWORD: "i" };

describe("docs/upstreams.md and the code agree", () => {
  test("every key an upstream or a route takes is in the reference", () => {
    const keys = [...Object.keys(COMMON), ...Object.keys(ROUTE), ...Object.keys(TARGET), ...Object.keys(WHEN), ...Object.values(KINDS).flatMap((k) => Object.keys(k.keys))];
    const missing = keys.filter((key) => !page.includes(`\`${key}\``));
    expect(missing).toEqual([]);
  });

  test("each kind's keys are in its own table (Kind `name`:)", () => {
    for (const [name, kind] of Object.entries(KINDS)) {
      const keys = Object.keys(kind.keys);
      if (!keys.length) continue;
      const at = page.indexOf(`Kind \`${name}\`:`);
      expect(at).toBeGreaterThan(-1);
      const section = page.slice(at, page.indexOf("\n\n", page.indexOf("|", at)));
      expect(keys.filter((key) => !section.includes(`\`${key}\``))).toEqual([]);
    }
  });

  test("every parley.toml example in the README and the page is a valid file", () => {
    const blocks = [...tomlBlocks(page), ...tomlBlocks(readFileSync(join(root, "README.md"), "utf8"))];
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    for (const text of blocks) {
      const file = readUpstreamsFile("example.toml", text, (name) => env[name]);
      expect(file.upstreams.length).toBeGreaterThan(0);
    }
  });
});
