import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, resolve } from "node:path";
import { Box, Text, useApp, useInput, usePaste, useWindowSize } from "ink";
import { memo, useEffect, useMemo, useState } from "react";
import type { Client, ListedModel, ServerFile, Settings } from "./client.ts";
import { copyToClipboard } from "./clipboard.ts";
import { HELP, parseCommand } from "./commands.ts";
import { humanSize } from "../src/files/size.ts";
import { Picker, SettingsPanel } from "./components/panels.tsx";
import { layoutDraft, PLAIN_KEY } from "./line-editor.ts";
import { codeBlocks } from "./markdown.ts";
import { apply, DEFAULT_SETTINGS, fieldNamed, settingsFrom } from "./settings.ts";
import type { ChatStore, StoredConversation } from "./store.ts";
import { colorWanted, createPaint, tone, type Paint } from "./style.ts";
import { fromJson, layoutTurn, toJson, toMarkdown, type Turn } from "./transcript.ts";
import { useChat } from "./use-chat.ts";
import { useEditor } from "./use-editor.ts";
import { useLatestState } from "./use-latest.ts";

export interface AppProps {
  client: Client;
  store: ChatStore;
  serverUrl: string;
  /** A model asked for by name; it wins over a resumed conversation's. */
  model?: string;
  /** The model when nothing else names one (DEFAULT_ALPHA_MODEL); else the server's first. */
  defaultModel?: string;
  settings?: Settings;
  /** Open a stored conversation: its id, or "last". */
  resume?: number | "last";
  /** Where /save, /load and /attach take relative names from; the working directory by default. */
  cwd?: string;
  /** Fixed size, for tests; the terminal's otherwise. */
  size?: { columns: number; rows: number };
  /** Colours in the transcript; off when NO_COLOR is set. */
  color?: boolean;
  /** Where /copy puts text; OSC 52 on the terminal by default. */
  clipboard?: (text: string) => void;
}

type Attachment = { id: string; name: string };
type Mode =
  | { kind: "chat" }
  | { kind: "models"; models: ListedModel[] }
  | { kind: "history"; conversations: ReturnType<ChatStore["conversations"]> }
  | { kind: "files"; files: ServerFile[] }
  | { kind: "settings" }
  | { kind: "confirm"; path: string; content: string };

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const layouts = new WeakMap<Turn, { key: string; lines: string[] }>();

/** A finished turn is laid out once per width; only the live reply is laid out again as it grows. */
function linesOf(turn: Turn, width: number, paint: Paint): string[] {
  const key = `${width}:${paint.color}`;
  const cached = layouts.get(turn);
  if (cached?.key === key) return cached.lines;
  const lines = layoutTurn(turn, width, paint);
  layouts.set(turn, { key, lines });
  return lines;
}

export function App(props: AppProps) {
  const { client, store } = props;
  const { exit } = useApp();
  const window = useWindowSize();
  const { columns, rows } = props.size ?? { columns: window.columns || 80, rows: window.rows || 24 };
  const paint = useMemo(() => createPaint(props.color ?? colorWanted()), [props.color]);
  const resumed = useMemo(() => findResumed(store, props.resume), []);
  const chat = useChat(client, store);
  const editor = useEditor(store);
  // Commands read the latest model and settings, not this render's: lines that arrive together
  // (a paste, or a busy machine) run before the screen redraws, and each must see the one before.
  const [model, setModelState, currentModel] = useLatestState(props.model ?? (resumed.conversation?.model || undefined) ?? props.defaultModel);
  const startSettings = useMemo(() => props.settings ?? resumed.conversation?.settings ?? settingsFrom(store.preference("settings")) ?? DEFAULT_SETTINGS, []);
  const [settings, setSettingsState, currentSettings] = useLatestState<Settings>(startSettings);
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const [mode, setMode, currentMode] = useLatestState<Mode>({ kind: "chat" });
  const [scroll, setScroll] = useLatestState(0);
  const [tick, setTick] = useState(0);
  const busy = chat.busySince !== undefined;
  const cwd = props.cwd ?? process.cwd();

  const setModel = (next: string) => {
    setModelState(next);
    chat.remember({ model: next });
  };
  const setSettings = (next: Settings) => {
    setSettingsState(next);
    store.setPreference("settings", next);
    chat.remember({ settings: next });
  };

  useEffect(() => {
    if (resumed.conversation) chat.load(resumed.conversation);
    if (resumed.problem) chat.info(resumed.problem);
    if (model) return;
    client.models().then(
      (models) => (models[0] ? setModelState(models[0].id) : chat.error("The server lists no models: configure a provider, then /model <name>.")),
      (error) => chat.error(`Could not list models: ${error.message}`),
    );
  }, []);

  useEffect(() => {
    if (!busy) return;
    const timer = setInterval(() => setTick((t) => t + 1), 100);
    return () => clearInterval(timer);
  }, [busy]);

  const input = layoutDraft(editor.draft, Math.max(10, columns - 3));
  const firstRow = Math.max(0, Math.min(input.row - 4, input.rows.length - 5));
  const inputRows = input.rows.slice(firstRow, firstRow + 5);
  const bodyHeight = Math.max(3, rows - 3 - inputRows.length - (attachments.length ? 1 : 0));
  const finished = useMemo(() => chat.turns.flatMap((t) => linesOf(t, columns, paint)), [chat.turns, columns, paint]);
  const liveLines = useMemo(() => (chat.live ? layoutTurn(chat.live, columns, paint) : []), [chat.live, columns, paint]);
  const lines = liveLines.length ? [...finished, ...liveLines] : finished;
  const maxScroll = Math.max(0, lines.length - bodyHeight);
  const offset = Math.min(scroll, maxScroll);
  const visible = lines.slice(Math.max(0, lines.length - bodyHeight - offset), lines.length - offset);

  function save(path: string, content: string) {
    try {
      writeFileSync(path, content);
      chat.info(`Saved to ${path}`);
    } catch (error) {
      chat.error(`Could not save ${path}: ${error instanceof Error ? error.message : error}`);
    }
  }

  function submit(text: string) {
    const line = text.trim();
    if (!line) return;
    if (busy && !line.startsWith("/")) return chat.info("A reply is still coming: wait, or press Esc to cancel it.");
    editor.remember(text);
    editor.set("");
    run(line, text);
  }

  function send(text: string, files: Attachment[]) {
    const model = currentModel();
    if (!model) return chat.error("No model yet: choose one with /model.");
    setScroll(0);
    setAttachments([]);
    void chat.send(text, model, currentSettings(), files);
  }

  function run(line: string, raw: string) {
    const command = parseCommand(line);
    if (!command) return send(raw.trim(), attachments);
    const idle = () => {
      if (busy) chat.info("A reply is still coming: wait, or press Esc to cancel it.");
      return !busy;
    };
    switch (command.name) {
      case "model":
        if (command.arg) {
          setModel(command.arg);
          return chat.info(`Model: ${command.arg}`);
        }
        return void client.models().then(
          (models) => setMode({ kind: "models", models }),
          (error) => chat.error(`Could not list models: ${error.message}`),
        );
      case "settings":
        return command.arg ? setOne(command.arg) : setMode({ kind: "settings" });
      case "save": {
        if (!command.arg) return chat.error("Usage: /save <filename> (.json for JSON, anything else for Markdown)");
        const path = resolve(cwd, command.arg);
        const content = path.endsWith(".json") ? toJson(chat.turns, currentModel() ?? "", currentSettings()) : toMarkdown(chat.turns, currentModel() ?? "");
        if (existsSync(path)) return setMode({ kind: "confirm", path, content });
        return save(path, content);
      }
      case "load":
        return idle() && load(command.arg);
      case "history":
        return idle() && setMode({ kind: "history", conversations: store.conversations() });
      case "new":
        if (!idle()) return;
        setScroll(0);
        chat.reset();
        return chat.info("A new conversation. The last one is kept: /history opens it.");
      case "retry": {
        if (!idle()) return;
        const last = chat.takeLast();
        if (!last) return chat.info("Nothing to retry yet.");
        return send(last.text, last.files);
      }
      case "edit": {
        if (!idle()) return;
        const last = chat.takeLast();
        if (!last) return chat.info("No prompt to edit yet.");
        editor.set(last.text);
        return setAttachments(last.files);
      }
      case "attach":
        return attach(command.arg);
      case "detach":
        setAttachments([]);
        return chat.info("No files will go with the next message.");
      case "files":
        return void client.files().then(
          (files) => setMode({ kind: "files", files }),
          (error) => chat.error(`Could not list files: ${error.message}`),
        );
      case "copy":
        return copy(command.arg);
      case "help":
        return chat.info(HELP);
      case "exit":
        return quit();
      case "unknown":
        return chat.info(`Unknown command ${command.arg}: nothing was sent. /help lists the commands.`);
    }
  }

  function setOne(arg: string) {
    const [name = "", ...rest] = arg.split(/\s+/);
    const field = fieldNamed(name);
    if (!field) return chat.error(`Unknown setting "${name}": use temperature, max_tokens, system or stream.`);
    const result = apply(currentSettings(), field, arg.slice(name.length));
    if (typeof result === "string") return chat.error(`${result} Nothing was changed.`);
    setSettings(result);
    chat.info(`${name} set to ${rest.join(" ") || "(default)"}; kept for next time.`);
  }

  function load(arg: string) {
    if (!arg) return chat.error("Usage: /load <file.json> (a chat saved with /save name.json)");
    const path = resolve(cwd, arg.replace(/^~(?=\/)/, homedir()));
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      return chat.error(`Could not read ${path}: ${error instanceof Error ? error.message : error}`);
    }
    const file = fromJson(text);
    if (typeof file === "string") return chat.error(`Could not load ${path}: ${file}.`);
    const nextModel = file.model || currentModel();
    if (!nextModel) return chat.error("No model yet: choose one with /model, then /load again.");
    const nextSettings = file.settings ?? currentSettings();
    setModelState(nextModel);
    setSettingsState(nextSettings);
    setScroll(0);
    chat.adopt(file.messages, nextModel, nextSettings);
    chat.info(`Loaded ${file.messages.length} messages from ${basename(path)}; they are saved as a new conversation.`);
  }

  function open(conversation: StoredConversation) {
    if (conversation.model) setModelState(conversation.model);
    if (conversation.settings) setSettingsState(conversation.settings);
    setScroll(0);
    chat.load(conversation);
  }

  function attach(arg: string) {
    if (!arg) {
      return chat.info(attachments.length ? `Going with the next message: ${attachments.map((a) => a.name).join(", ")}` : "Usage: /attach <path> (or /files to pick one the server has)");
    }
    const path = resolve(cwd, arg.replace(/^~(?=\/)/, homedir()));
    if (!existsSync(path)) return chat.error(`No file at ${path}.`);
    chat.info(`Uploading ${basename(path)}…`);
    client.upload(path).then(
      (file) => {
        setAttachments((list) => [...list.filter((a) => a.id !== file.id), { id: file.id, name: file.filename }]);
        chat.info(`Attached ${file.filename} (${file.id}): it goes with your next message.`);
      },
      (error) => chat.error(`Could not upload ${basename(path)}: ${error.message}`),
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
    (props.clipboard ?? copyToClipboard)(text);
    chat.info(`Copied ${arg ? `code block ${arg}` : "the last reply"} (${text.length} characters) to the clipboard.`);
  }

  function quit() {
    const left = editor.current().trim();
    if (left) editor.remember(editor.current());
    chat.cancel();
    exit();
  }

  // Ctrl+C, whatever is on screen: stops a reply when one is coming, else quits.
  useInput((input, key) => {
    if (!(key.ctrl && input === "c")) return;
    if (busy) return chat.cancel();
    quit();
  });

  useInput(
    (input, key) => {
      if (key.ctrl && input === "c") return;
      const mode = currentMode();
      if (mode.kind === "confirm") {
        if (input.toLowerCase() === "y") save(mode.path, mode.content);
        else chat.info("Not saved.");
        return setMode({ kind: "chat" });
      }
      if (key.escape) return busy ? chat.cancel() : editor.clear();
      if (key.pageUp || (key.shift && key.upArrow)) return setScroll((s) => Math.min(maxScroll, s + (key.pageUp ? bodyHeight - 1 : 1)));
      if (key.pageDown || (key.shift && key.downArrow)) return setScroll((s) => Math.max(0, s - (key.pageDown ? bodyHeight - 1 : 1)));
      if (key.return && (key.meta || key.shift)) return editor.type("\n");
      if (key.return) return submit(editor.current());
      if (editor.key(input, key)) return;
      if (key.ctrl || key.meta || key.tab) return;
      // Keys pressed quickly arrive as one chunk of text: a carriage return in it sends, a line feed
      // (Ctrl+J) is a new line, and other control bytes are the Ctrl+letter keys they stand for.
      for (const part of input.split(/([\x00-\x09\x0b-\x1f])/)) {
        if (part === "\r") submit(editor.current());
        else if (/^[\x00-\x1f]$/.test(part)) editor.key(String.fromCharCode(part.charCodeAt(0) + 96), { ...PLAIN_KEY, ctrl: true });
        else if (part) editor.type(part);
      }
    },
    { isActive: mode.kind === "chat" || mode.kind === "confirm" },
  );
  usePaste((text) => editor.type(text.replace(/\r\n?/g, "\n")), { isActive: mode.kind === "chat" });

  const elapsed = chat.busySince ? ((Date.now() - chat.busySince) / 1000).toFixed(1) : "";
  const spent = chat.cost === undefined ? "" : ` · ${dollars(chat.cost)}`;
  const tokens = chat.usage.input || chat.usage.output ? ` · ${chat.usage.input} → ${chat.usage.output} tokens${spent} this chat` : "";
  const header = [" parley", model ?? "(no model)", ...(settings.system ? ["system prompt on"] : []), ...(chat.conversationId ? [`#${chat.conversationId}`] : []), props.serverUrl].join(" · ");
  const close = () => setMode({ kind: "chat" });
  return (
    <Box flexDirection="column" width={columns} height={rows}>
      <Text inverse>{header.padEnd(columns).slice(0, columns)}</Text>
      {mode.kind === "models" ? (
        <Picker title="Pick a model" height={bodyHeight} items={modelItems(mode.models, model, columns)}
          initial={mode.models.findIndex((m) => m.id === model)} onPick={(picked) => {
            close();
            if (picked) {
              setModel(picked);
              chat.info(`Model: ${picked}`);
            }
          }} />
      ) : mode.kind === "history" ? (
        <Picker title="Open a conversation" height={bodyHeight} items={mode.conversations.map((c) => ({
          label: `#${c.id}  ${new Date(c.updatedAt).toLocaleString()}  ${c.model}  ${c.title} (${c.turns} prompt${c.turns === 1 ? "" : "s"})`, value: c.id,
        }))} onPick={(id) => {
          close();
          const conversation = id === undefined ? undefined : store.load(id);
          if (conversation) open(conversation);
        }} />
      ) : mode.kind === "files" ? (
        <Picker title="Attach one of the server's files" height={bodyHeight} items={mode.files.map((f) => ({
          label: `${f.filename}  ${humanSize(f.bytes)}  ${f.status ?? ""}  ${f.id}`, value: f,
        }))} onPick={(file) => {
          close();
          if (!file) return;
          setAttachments((list) => [...list.filter((a) => a.id !== file.id), { id: file.id, name: file.filename }]);
          chat.info(`Attached ${file.filename} (${file.id}): it goes with your next message.`);
        }} />
      ) : mode.kind === "settings" ? (
        <SettingsPanel settings={settings} height={bodyHeight} onChange={setSettings} onClose={close} />
      ) : (
        <Viewport lines={visible} height={bodyHeight} />
      )}
      {attachments.length ? (
        <Text color={tone("yellow")} wrap="truncate">{`+ ${attachments.map((a) => a.name).join(", ")} · goes with your next message · /detach drops`}</Text>
      ) : null}
      <Text color={tone("gray")}>{"─".repeat(columns)}</Text>
      {inputRows.map((row, i) => {
        const here = firstRow + i === input.row;
        const chars = Array.from(row);
        let used = 0;
        let split = chars.length;
        for (const [n, char] of chars.entries()) {
          if (used >= input.column) {
            split = n;
            break;
          }
          used += Bun.stringWidth(char);
        }
        return (
          <Text key={i} wrap="truncate">
            <Text color={tone("cyan")}>{firstRow + i === 0 ? "> " : "  "}</Text>
            {here ? chars.slice(0, split).join("") : row}
            {here ? <Text inverse>{chars[split] ?? " "}</Text> : null}
            {here ? chars.slice(split + 1).join("") : null}
          </Text>
        );
      })}
      <Text color={tone("gray")} wrap="truncate">
        {mode.kind === "confirm"
          ? `${mode.path} exists. Overwrite it? (y/N)`
          : busy
            ? `${SPINNER[tick % SPINNER.length]} waiting for ${model} · ${elapsed}s · Esc or Ctrl+C cancels${tokens}`
            : offset > 0
              ? `scrolled up ${offset} lines · PgDn to return`
              : `Enter send · Alt+Enter new line · /help${tokens}`}
      </Text>
    </Box>
  );
}

/** The picker's lines: each model with the upstream that serves it in a column beside (typing an upstream's name filters to its models). */
function modelItems(models: ListedModel[], current: string | undefined, columns: number) {
  const width = Math.min(Math.max(0, ...models.map((m) => m.id.length)), Math.max(10, columns - 24));
  return models.map(({ id, provider }) => ({
    label: `${provider ? `${id.padEnd(width)}  ${provider}` : id}${id === current ? "  (current)" : ""}`,
    value: id,
  }));
}

function findResumed(store: ChatStore, resume: AppProps["resume"]): { conversation?: StoredConversation; problem?: string } {
  if (resume === undefined) return {};
  const id = resume === "last" ? store.latestId() : resume;
  if (id === undefined) return { problem: "No earlier conversation to continue: this is a new one." };
  const conversation = store.load(id);
  return conversation ? { conversation } : { problem: `No conversation #${id}: this is a new one. /history lists them.` };
}

const Viewport = memo(function Viewport({ lines, height }: { lines: string[]; height: number }) {
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      {lines.map((line, i) => (
        <Text key={i} wrap="truncate">
          {line || " "}
        </Text>
      ))}
    </Box>
  );
});

/** Cents when there are some; small amounts with two significant digits. */
const dollars = (usd: number) => (usd >= 0.01 || usd === 0 ? `$${usd.toFixed(2)}` : `$${usd.toPrecision(2)}`);
