import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { catalogue } from "../../src/providers/catalogue.ts";
import { DECLARABLE, KINDS } from "../../src/providers/kinds.ts";

describe("the kinds", () => {
  test("every folder under src/providers/ is a kind of the table, and every kind a folder", () => {
    const root = join(import.meta.dir, "../../src/providers");
    const folders = readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(folders.sort()).toEqual(Object.keys(KINDS).sort());
  });

  test("no file of a kind imports its kind.ts: the kind loads the rest, never the other way", () => {
    const root = join(import.meta.dir, "../../src/providers");
    for (const kind of Object.keys(KINDS)) {
      for (const file of readdirSync(join(root, kind)).filter((f) => f !== "kind.ts")) {
        expect({ file: `${kind}/${file}`, imports: /from "\.\/kind\.ts"/.test(readFileSync(join(root, kind, file), "utf8")) }).toEqual({ file: `${kind}/${file}`, imports: false });
      }
    }
  });

  test("the built-in mock calls no one and no file declares it; every other kind may be declared", () => {
    expect(KINDS.mock.builtIn && KINDS.mock.local).toBe(true);
    expect(DECLARABLE).toEqual(["openai", "bedrock", "anthropic", "gemini", "vertex"]);
    for (const kind of DECLARABLE) expect({ kind, builtIn: !!KINDS[kind].builtIn, local: !!KINDS[kind].local }).toEqual({ kind, builtIn: false, local: false });
  });

  test("a kind's built-in catalogue is its own, and a caller's copy of it", () => {
    expect(catalogue("mock").map((m) => m.id)).toEqual(["mock", "mock/tools", "mock/slow", "mock/error-429", "mock/error-503"]);
    expect(catalogue("openai")[0]).toEqual({ id: "gpt-4o", owned_by: "openai", created: Date.UTC(2024, 4, 13) / 1000 });
    expect(catalogue("anthropic")).toEqual([]);
    catalogue("mock")[0]!.id = "changed";
    expect(catalogue("mock")[0]!.id).toBe("mock");
  });
});
