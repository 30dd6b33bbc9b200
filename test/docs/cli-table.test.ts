/** The README's command table names every command and every option the command line accepts. */
import { expect, test } from "bun:test";
import type { ArgsDef, CommandDef } from "citty";
import { read } from "./markdown.ts";

const COMMANDS: Record<string, () => Promise<{ default: unknown }>> = {
  serve: () => import("../../src/commands/serve.ts"),
  config: () => import("../../src/commands/config.ts"),
  chat: () => import("../../src/commands/chat.ts"),
  models: () => import("../../src/commands/models.ts"),
  usage: () => import("../../src/commands/usage-report.ts"),
  trust: () => import("../../src/commands/trust.ts"),
};
const INTERNAL = new Set(["worker"]); // serve --worker N: how a supervisor starts its workers

test("every command, sub-command and option is in the README's command table", async () => {
  const readme = read("README.md");
  const table = readme.slice(readme.indexOf("## Command line"), readme.indexOf("\n## ", readme.indexOf("## Command line") + 1));
  const rows = table.split("\n").filter((l) => l.startsWith("| `parley "));
  const missing: string[] = [];
  for (const [name, load] of Object.entries(COMMANDS)) {
    const command = (await load()).default as CommandDef<ArgsDef>;
    const subs = Object.entries((command.subCommands ?? {}) as Record<string, CommandDef<ArgsDef>>);
    const forms = subs.length ? subs.map(([sub, def]) => [`${name} ${sub}`, def] as const) : [[name, command] as const];
    for (const [form, def] of forms) {
      const mine = rows.filter((r) => r.startsWith(`| \`parley ${form}`));
      if (mine.length === 0) missing.push(`parley ${form}`);
      for (const [arg, spec] of Object.entries((def.args ?? {}) as ArgsDef)) {
        if (spec.type === "positional" || INTERNAL.has(arg)) continue;
        if (!mine.some((r) => r.includes(`--${arg}`))) missing.push(`parley ${form} --${arg}`);
      }
    }
  }
  expect(missing).toEqual([]);
});
