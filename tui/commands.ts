/** Slash commands: `/name rest of the line`. */
export type Command =
  | { name: "model"; arg: string }
  | { name: "settings" }
  | { name: "save"; arg: string }
  | { name: "help" }
  | { name: "clear" }
  | { name: "exit" }
  | { name: "unknown"; arg: string };

export function parseCommand(line: string): Command | undefined {
  const match = /^\/(\S+)\s*([\s\S]*)$/.exec(line.trim());
  if (!match) return undefined;
  const [, name = "", arg = ""] = match;
  switch (name) {
    case "model":
    case "save":
      return { name, arg: arg.trim() };
    case "settings":
    case "help":
    case "clear":
    case "exit":
      return { name };
    case "quit":
      return { name: "exit" };
    default:
      return { name: "unknown", arg: `/${name}` };
  }
}

export const HELP = [
  "/model <name>      switch model (no name: pick from the server's list)",
  "/settings          temperature, max tokens, system prompt, streaming",
  "/save <file>       save the chat as Markdown, or JSON when the name ends in .json",
  "/clear             start over",
  "/help              this list",
  "/exit              leave (Ctrl+C works too)",
  "Enter sends · Alt+Enter or Ctrl+J: new line · Esc cancels a reply · PgUp/PgDn or Shift+↑/↓ scroll",
].join("\n");
