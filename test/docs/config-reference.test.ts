/** docs/configuration.md's settings reference is SETTINGS, and `parley config show` and /docs use the same names. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { BEGIN, END, PAGE, regenerate, renderReference } from "../../scripts/config-reference.ts";
import { GROUPS, SETTINGS } from "../../src/config.ts";
import { runCli, userDir } from "../lib/cli.ts";
import { startGateway } from "../lib/gateway.ts";

describe("the configuration reference", () => {
  test("docs/configuration.md is what `bun run docs:config` makes of SETTINGS", () => {
    const page = readFileSync(PAGE, "utf8");
    // When this fails: run `bun run docs:config` and commit docs/configuration.md.
    expect(page).toBe(regenerate(page));
  });

  test("the prose around the markers survives regeneration", () => {
    const page = `# Title\n\nhand-written\n\n${BEGIN}\nstale table\n${END}\n\nmore prose\n`;
    const next = regenerate(page);
    expect(next.startsWith("# Title\n\nhand-written\n\n")).toBe(true);
    expect(next.endsWith("\n\nmore prose\n")).toBe(true);
    expect(next).not.toContain("stale table");
  });

  test("every setting has one row, with its default and the values its check allows", () => {
    const reference = renderReference();
    for (const s of SETTINGS) {
      const row = reference.split("\n").find((l) => l.startsWith(`| \`${s.key}\``));
      expect(row, s.key).toBeDefined();
      if (s.fallback !== undefined) expect(row).toContain(`| \`${s.fallback}\` |`);
      if (s.check) expect(row).toContain(` | ${s.check.allowed.replace(/[|*_<>]/g, (c) => ({ "<": "&lt;", ">": "&gt;" })[c] ?? `\\${c}`)} | `);
      for (const alias of s.aliases ?? []) expect(row).toContain(`\`${alias}\``);
    }
  });

  test("settings are grouped by subject, in the order of the groups", () => {
    const order = Object.keys(GROUPS);
    const groups = SETTINGS.map((s) => order.indexOf(s.group));
    expect(groups).toEqual([...groups].sort((a, b) => a - b));
    expect(new Set(SETTINGS.map((s) => s.group)).size).toBe(order.length);
  });
});

describe("parley config show agrees with the table", () => {
  test("the same names, in the same order, with the documented defaults", async () => {
    const { MODELS_REFRESH_S: _, ...env } = userDir().env as Record<string, string | undefined>; // the test preload's, for servers
    const { stdout, code } = await runCli(["config", "show"], { env });
    expect(code).toBe(0);
    const rows = stdout.split("\n").filter((l) => l && !l.startsWith("#")).map((l) => l.split(/\s{2,}/));
    expect(rows.map((r) => r[0])).toEqual(SETTINGS.map((s) => s.key));
    for (const s of SETTINGS) {
      const row = rows.find((r) => r[0] === s.key)!;
      if (s.fallback !== undefined) expect(row.slice(1)).toEqual([s.fallback, "[default]"]);
    }
  });
});

describe("/docs agrees with the table", () => {
  test("every setting the OpenAPI document names is a setting, and each default it gives is the table's", async () => {
    const gateway = await startGateway();
    try {
      const response = await gateway.app.handle(new Request("http://localhost/docs/json"));
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(JSON.parse(text).openapi).toStartWith("3.");
      const names = new Set(SETTINGS.flatMap((s) => [s.key, ...(s.aliases ?? [])]));
      const mentioned = [...text.matchAll(/\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/g)].map((m) => m[0]);
      expect(mentioned.filter((n) => !names.has(n))).toEqual([]);
    } finally {
      await gateway.stop();
    }
  });
});
