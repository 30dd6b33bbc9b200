import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, resolve } from "node:path";
import type { Client, Settings } from "./client.ts";
import { HELP, parseCommand } from "./commands.ts";
import { codeBlocks } from "./markdown.ts";
import { apply, fieldNamed } from "./settings.ts";
import type { StoredConversation } from "./store.ts";
import { fromJson, toJson, toMarkdown } from "./transcript.ts";
import type { useChat } from "./use-chat.ts";
import type { useEditor } from "./use-editor.ts";
import type { Attachment, Mode } from "./types.ts";

/** What the slash commands act on. */
export interface CommandContext {
  client: Client;
  chat: ReturnType<typeof useChat>;
  editor: ReturnType<typeof useEditor>;
  /** The latest model and settings (commands that arrive together each see the one before). */
  model: () => string | undefined;
  setModel: (model: string) => void;
  /** Model and settings as a loaded conversation has them, not kept as preferences. */
  adopt: (change: { model?: string; settings?: Settings }) => void;
  settings: () => Settings;
  setSettings: (settings: Settings) => void;
  attachments: Attachment[];
  setAttachments: (change: (list: Attachment[]) => Attachment[]) => void;
  setMode: (mode: Mode) => void;
  setScroll: (scroll: number) => void;
  send: (text: string, files: Attachment[]) => void;
  quit: () => void;
  cwd: string;
  clipboard: (text: string) => void;
}

/** The slash commands: `run` takes a submitted line that starts with one. */
export function useCommands(c: CommandContext) {
  const { chat, client } = c;
  const busy = () => chat.busyNow();
  const idle = () => {
    if (busy()) chat.info("A reply is still coming: wait, or press Esc to cancel it.");
    return !busy();
  };
  const path = (arg: string) => resolve(c.cwd, arg.replace(/^~(?=\/)/, homedir()));

  function run(line: string) {
    const command = parseCommand(line)!;
    switch (command.name) {
      case "model":
        if (command.arg) {
          c.setModel(command.arg);
          return chat.info(`Model: ${command.arg}`);
        }
        return void client.models().then(
          (models) => c.setMode({ kind: "models", models }),
          (error) => chat.error(`Could not list models: ${error.message}`),
        );
      case "settings":
        return command.arg ? setOne(command.arg) : c.setMode({ kind: "settings" });
      case "save": {
        if (!command.arg) return chat.error("Usage: /save <filename> (.json for JSON, anything else for Markdown)");
        const file = path(command.arg);
        const content = file.endsWith(".json") ? toJson(chat.turns, c.model() ?? "", c.settings()) : toMarkdown(chat.turns, c.model() ?? "");
        if (existsSync(file)) return c.setMode({ kind: "confirm", path: file, content });
        return save(file, content);
      }
      case "load":
        return idle() && load(command.arg);
      case "history":
        return idle() && c.setMode({ kind: "history", query: command.arg });
      case "new":
        if (!idle()) return;
        c.setScroll(0);
        chat.reset();
        return chat.info("A new conversation. The last one is kept: /history opens it.");
      case "retry": {
        if (!idle()) return;
        const last = chat.takeLast();
        if (!last) return chat.info("Nothing to retry yet.");
        return c.send(last.text, last.files);
      }
      case "edit": {
        if (!idle()) return;
        const last = chat.takeLast();
        if (!last) return chat.info("No prompt to edit yet.");
        c.editor.set(last.text);
        return c.setAttachments(() => last.files);
      }
      case "attach":
        return attach(command.arg);
      case "detach":
        c.setAttachments(() => []);
        return chat.info("No files will go with the next message.");
      case "files":
        return void client.files().then(
          (files) => c.setMode({ kind: "files", files }),
          (error) => chat.error(`Could not list files: ${error.message}`),
        );
      case "copy":
        return copy(command.arg);
      case "help":
        return chat.info(HELP);
      case "exit":
        return c.quit();
      case "unknown":
        return chat.info(`Unknown command ${command.arg}: nothing was sent. /help lists the commands.`);
    }
  }

  function save(file: string, content: string) {
    try {
      writeFileSync(file, content);
      chat.info(`Saved to ${file}`);
    } catch (error) {
      chat.error(`Could not save ${file}: ${error instanceof Error ? error.message : error}`);
    }
  }

  function setOne(arg: string) {
    const [name = "", ...rest] = arg.split(/\s+/);
    const field = fieldNamed(name);
    if (!field) return chat.error(`Unknown setting "${name}": use temperature, max_tokens, system or stream.`);
    const result = apply(c.settings(), field, arg.slice(name.length));
    if (typeof result === "string") return chat.error(`${result} Nothing was changed.`);
    c.setSettings(result);
    chat.info(`${name} set to ${rest.join(" ") || "(default)"}; kept for next time.`);
  }

  function load(arg: string) {
    if (!arg) return chat.error("Usage: /load <file.json> (a chat saved with /save name.json)");
    const file = path(arg);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      return chat.error(`Could not read ${file}: ${error instanceof Error ? error.message : error}`);
    }
    const loaded = fromJson(text);
    if (typeof loaded === "string") return chat.error(`Could not load ${file}: ${loaded}.`);
    const model = loaded.model || c.model();
    if (!model) return chat.error("No model yet: choose one with /model, then /load again.");
    const settings = loaded.settings ?? c.settings();
    c.adopt({ model, settings });
    c.setScroll(0);
    chat.adopt(loaded.messages, model, settings);
    chat.info(`Loaded ${loaded.messages.length} messages from ${basename(file)}; they are saved as a new conversation.`);
  }

  function open(conversation: StoredConversation) {
    c.adopt({ model: conversation.model || undefined, settings: conversation.settings });
    c.setScroll(0);
    chat.load(conversation);
  }

  function attach(arg: string) {
    if (!arg) {
      return chat.info(c.attachments.length ? `Going with the next message: ${c.attachments.map((a) => a.name).join(", ")}` : "Usage: /attach <path> (or /files to pick one the server has)");
    }
    const file = path(arg);
    if (!existsSync(file)) return chat.error(`No file at ${file}.`);
    chat.info(`Uploading ${basename(file)}…`);
    client.upload(file).then(
      (uploaded) => {
        c.setAttachments((list) => [...list.filter((a) => a.id !== uploaded.id), { id: uploaded.id, name: uploaded.filename }]);
        chat.info(`Attached ${uploaded.filename} (${uploaded.id}): it goes with your next message.`);
      },
      (error) => chat.error(`Could not upload ${basename(file)}: ${error.message}`),
    );
  }

  function copy(arg: string) {
    const reply = chat.turns.findLast((t) => t.role === "assistant" && t.text);
    if (!reply) return chat.info("No reply to copy yet.");
    let text = reply.text;
    if (arg) {
      const blocks = codeBlocks(reply.text);
      const n = Number(arg);
      if (!Number.isInteger(n) || n < 1 || n > blocks.length) {
        return chat.error(blocks.length ? `The last reply has code blocks 1 to ${blocks.length}.` : "The last reply has no code blocks.");
      }
      text = blocks[n - 1]!;
    }
    c.clipboard(text);
    chat.info(`Copied ${arg ? `code block ${arg}` : "the last reply"} (${text.length} characters) to the clipboard.`);
  }

  return { run, save, open };
}
