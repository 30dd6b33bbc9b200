import type { ArgDef, ArgsDef, CommandDef, CommandMeta, SubCommandsDef } from "citty";
import { closest } from "../lib/did-you-mean.ts";

/** A value citty accepts as a plain value, a promise, or a function returning either. */
const resolve = async <T>(value: T | Promise<T> | (() => T | Promise<T>) | undefined): Promise<T | undefined> =>
  typeof value === "function" ? (value as () => T | Promise<T>)() : value;

/** Args whose description starts with this are accepted but never shown or suggested. */
export const isInternal = (def: ArgDef) => def.description?.startsWith("(internal)") ?? false;

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * citty runs a command whatever flags it is given; this walks argv against each command's own
 * `args` first and returns the one-line reason it cannot run, or undefined when it can: an unknown
 * command or option (with the closest known name), a missing value or command, a stray argument.
 */
export async function checkArgv(root: CommandDef<any>, argv: string[]): Promise<string | undefined> {
  let command = root;
  const path = [(await resolve<CommandMeta>(root.meta))?.name ?? "parley"];
  let args = (await resolve<ArgsDef>(command.args)) ?? {};
  let positionals = 0;
  const seeHelp = () => `(see ${path.join(" ")} --help)`;

  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") {
      positionals += argv.length - i - 1;
      break;
    }
    if (token.startsWith("-") && token !== "-") {
      const [flag = "", inline] = splitOnce(token, "=");
      const known = findFlag(args, flag, path.length === 1);
      if (known === "builtin") continue;
      if (!known) {
        const suggestion = closest(flag.replace(/^-+/, ""), flagNames(args));
        return `unknown option ${flag} for "${path.join(" ")}"${suggestion ? `; did you mean --${suggestion}?` : ""} ${seeHelp()}`;
      }
      if (known.type === "boolean" || inline !== undefined) continue;
      if (i + 1 >= argv.length) return `${flag} needs a value ${seeHelp()}`;
      i++;
      continue;
    }
    const subCommands = await resolve<SubCommandsDef>(command.subCommands);
    if (subCommands && Object.keys(subCommands).length > 0) {
      if (!Object.hasOwn(subCommands, token)) {
        const suggestion = closest(token, Object.keys(subCommands));
        return `unknown command "${token}" for "${path.join(" ")}"${suggestion ? `; did you mean "${suggestion}"?` : ""} ${seeHelp()}`;
      }
      command = (await resolve(subCommands[token]))!;
      path.push(token);
      args = (await resolve<ArgsDef>(command.args)) ?? {};
      positionals = 0;
      continue;
    }
    positionals++;
    if (positionals > positionalDefs(args).length) return `unexpected argument "${token}" for "${path.join(" ")}"; quote a value that contains spaces ${seeHelp()}`;
  }

  if (argv.some((token) => token === "--help" || token === "-h")) return;
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) return;
  const subCommands = await resolve<SubCommandsDef>(command.subCommands);
  if (subCommands && Object.keys(subCommands).length > 0 && !command.run) {
    return `missing command for "${path.join(" ")}": ${Object.keys(subCommands).join(", ")} ${seeHelp()}`;
  }
  const missing = positionalDefs(args).slice(positionals).find(([, def]) => def.required !== false && def.default === undefined);
  if (missing) return `missing argument ${missing[0].toUpperCase()} for "${path.join(" ")}" ${seeHelp()}`;
}

function findFlag(args: ArgsDef, flag: string, atRoot: boolean): ArgDef | "builtin" | undefined {
  const long = flag.startsWith("--");
  const name = flag.replace(/^-+/, "");
  if (long ? name === "help" || (atRoot && name === "version") : name === "h" || (atRoot && name === "v")) return "builtin";
  for (const [key, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    const aliases = ["alias" in def ? (def.alias ?? []) : []].flat();
    if (!long) {
      if (aliases.includes(name)) return def;
      continue;
    }
    if (kebab(name) === kebab(key) || aliases.includes(name)) return def;
    if (def.type === "boolean" && name.startsWith("no-") && kebab(name.slice(3)) === kebab(key)) return def;
  }
}

function flagNames(args: ArgsDef): string[] {
  const names = Object.entries(args).filter(([, def]) => def.type !== "positional" && !isInternal(def)).map(([key]) => key);
  return [...names, "help"];
}

function positionalDefs(args: ArgsDef): [string, ArgDef][] {
  return Object.entries(args).filter(([, def]) => def.type === "positional");
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}
