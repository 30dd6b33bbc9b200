import { readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { COMMAND_NAMES } from "./commands.ts";

/** What Tab does to a draft: the new draft, and the choices to show when more than one fits. */
export interface Completion {
  text: string;
  choices: string[];
}

export interface CompletionSources {
  /** Model ids with their upstream, for `/model `. */
  models: { id: string; provider?: string }[];
  /** Where `/attach` paths are relative to. */
  cwd: string;
}

/** Completes the draft's last word, for a slash command, a `/model` id or an `/attach` path; undefined when nothing fits. */
export function complete(draft: string, sources: CompletionSources): Completion | undefined {
  const command = /^\/(\S*)$/.exec(draft);
  if (command) return extend(draft, "/", command[1]!, COMMAND_NAMES.map((n) => `${n} `), (n) => `/${n.trim()}`);
  const model = /^\/model\s+(\S*)$/.exec(draft);
  if (model) {
    const head = draft.slice(0, draft.length - model[1]!.length);
    const label = (id: string) => {
      const provider = sources.models.find((m) => m.id === id)?.provider;
      return provider ? `${id} (${provider})` : id;
    };
    return extend(draft, head, model[1]!, sources.models.map((m) => m.id), label);
  }
  const attach = /^\/(?:attach|load|save)\s+(.*)$/.exec(draft);
  if (attach) return extend(draft, draft.slice(0, draft.length - attach[1]!.length), attach[1]!, paths(attach[1]!, sources.cwd), (p) => p);
  return undefined;
}

/** `typed` completed among `options`: the one that fits, or as far as all that fit agree. */
function extend(draft: string, head: string, typed: string, options: string[], label: (option: string) => string): Completion | undefined {
  const fits = options.filter((o) => o.startsWith(typed));
  if (fits.length === 0) return undefined;
  const common = fits.reduce((a, b) => {
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    return a.slice(0, i);
  });
  const text = head + common;
  return { text: text.length >= draft.length ? text : draft, choices: fits.length > 1 ? fits.map(label) : [] };
}

/** Names in the typed path's directory, as typed (a directory with its slash); dot files only when a dot is typed. */
function paths(typed: string, cwd: string): string[] {
  const prefix = typed.slice(0, typed.lastIndexOf("/") + 1);
  const dir = resolve(cwd, (prefix || ".").replace(/^~(?=\/)/, homedir()));
  const dots = typed.slice(prefix.length).startsWith(".");
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const isDir = (name: string) => {
    try {
      return statSync(join(dir, name)).isDirectory();
    } catch {
      return false;
    }
  };
  return names.filter((name) => dots || !name.startsWith(".")).sort().map((name) => `${prefix}${name}${isDir(name) ? "/" : ""}`);
}
