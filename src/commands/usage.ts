import { renderUsage, type ArgsDef, type CommandDef } from "citty";
import { isInternal } from "./strict-argv.ts";

/** citty's help text without the internal args. */
export async function showUsage(command: CommandDef<any>, parent?: CommandDef<any>): Promise<void> {
  const args = typeof command.args === "function" ? await command.args() : await command.args;
  const shown = Object.fromEntries(Object.entries((args ?? {}) as ArgsDef).filter(([, def]) => !isInternal(def)));
  process.stdout.write(`${await renderUsage({ ...command, args: shown }, parent)}\n\n`);
}
