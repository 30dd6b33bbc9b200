/** Slash commands: `/name rest of the line`. */
export type Command =
  | { name: "model" | "save" | "load" | "attach" | "settings" | "copy" | "history"; arg: string }
  | { name: "new" | "retry" | "edit" | "files" | "detach" | "help" | "exit" }
  | { name: "unknown"; arg: string };

const WITH_ARG = new Set(["model", "save", "load", "attach", "settings", "copy", "history"]);
const BARE = new Set(["new", "retry", "edit", "files", "detach", "help", "exit"]);
const ALIASES = new Map([["quit", "exit"], ["clear", "new"]]);

/** Every command's name, aliases too, for Tab completion. */
export const COMMAND_NAMES = [...WITH_ARG, ...BARE, ...ALIASES.keys()].sort();

/** Whether a draft that starts a command names no command, nor the start of one (marked as it is typed). */
export function unknownCommand(draft: string): string | undefined {
  const match = /^\/(\S*)(\s?)/.exec(draft);
  if (!match) return undefined;
  const [, typed = "", space] = match;
  if (space ? COMMAND_NAMES.includes(typed) : COMMAND_NAMES.some((n) => n.startsWith(typed))) return undefined;
  return `/${typed}`;
}

export function parseCommand(line: string): Command | undefined {
  const match = /^\/(\S+)\s*([\s\S]*)$/.exec(line.trim());
  if (!match) return undefined;
  const [, typed = "", arg = ""] = match;
  const name = ALIASES.get(typed) ?? typed;
  if (WITH_ARG.has(name)) return { name, arg: arg.trim() } as Command;
  if (BARE.has(name)) return { name } as Command;
  return { name: "unknown", arg: `/${typed}` };
}

export const HELP = [
  "/model <name>        switch model (no name: pick from the server's list)",
  "/settings [key val]  temperature, max_tokens, system, stream (no key: a panel); kept for next time",
  "/new                 a fresh conversation (the current one stays in /history)",
  "/history [words]     open an earlier conversation: type to search their text; Ctrl+R renames, Ctrl+D deletes",
  "/retry               ask again for the last reply",
  "/edit                take the last prompt back into the editor",
  "/attach <path>       upload a file; it goes with your next message (/detach drops it)",
  "/files               the server's files: pick one to attach",
  "/copy [n]            copy the last reply (or its n-th code block) to the clipboard",
  "/save <file>         save as Markdown, or JSON when the name ends in .json",
  "/load <file.json>    open a conversation saved with /save",
  "/help                this list",
  "/exit                leave (Ctrl+C when idle works too)",
  "Enter sends (while a reply comes, queues: ↑ on an empty line takes it back) · Alt+Enter or Ctrl+J: new line",
  "↑/↓ earlier prompts · Ctrl+R searches them · Tab completes commands, /model ids, paths · Ctrl+G or Ctrl+X Ctrl+E: $EDITOR",
  "Esc cancels a reply; on a draft, Esc twice clears it (Ctrl+Z brings it back)",
  "←/→ Home/End Ctrl+A/E Alt+B/F move · Ctrl+W Ctrl+U Ctrl+K delete (Ctrl+Y puts back) · PgUp/PgDn scroll",
].join("\n");
