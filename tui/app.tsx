import { Box, Text, useApp, useInput, usePaste, useWindowSize } from "ink";
import { memo, useEffect, useMemo, useState } from "react";
import type { Client, ListedModel, Settings } from "./client.ts";
import { copyToClipboard } from "./clipboard.ts";
import { parseCommand, unknownCommand } from "./commands.ts";
import { HistoryPanel } from "./components/history-panel.tsx";
import { InputBox, inputRows } from "./components/input-box.tsx";
import { waitingText } from "./components/status-line.ts";
import { editExternally } from "./external-editor.ts";
import { humanSize } from "../src/files/size.ts";
import { Picker, SettingsPanel } from "./components/panels.tsx";
import { draftOf } from "./line-editor.ts";
import { DEFAULT_SETTINGS, settingsFrom } from "./settings.ts";
import type { ChatStore, StoredConversation } from "./store.ts";
import { colorWanted, createPaint, tone, type Paint } from "./style.ts";
import { layoutTurn, type Turn } from "./transcript.ts";
import type { Attachment, Mode } from "./types.ts";
import { useChat } from "./use-chat.ts";
import { useCommands } from "./use-commands.ts";
import { useEditor } from "./use-editor.ts";
import { useKeys } from "./use-keys.ts";
import { useOutbox } from "./use-outbox.ts";
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
  const { exit, suspendTerminal } = useApp();
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
  const [attachments, setAttachments, currentAttachments] = useLatestState<Attachment[]>([]);
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

  function send(text: string, files: Attachment[]) {
    const model = currentModel();
    if (!model) return chat.error("No model yet: choose one with /model.");
    setScroll(0);
    void chat.send(text, model, currentSettings(), files);
  }
  const outbox = useOutbox(busy, chat.busyNow, (message) => send(message.text, message.files));

  function quit() {
    const left = editor.current().trim();
    if (left) editor.remember(editor.current());
    chat.cancel();
    exit();
  }

  const commands = useCommands({
    client, chat, editor, model: currentModel, setModel, settings: currentSettings, setSettings, attachments, setAttachments, setMode, setScroll, send, quit, cwd,
    clipboard: props.clipboard ?? copyToClipboard,
    adopt(change) {
      if (change.model) setModelState(change.model);
      if (change.settings) setSettingsState(change.settings);
    },
  });

  /** A message goes now, or waits its turn while a reply streams; a command runs at once. */
  function submit(text: string) {
    const line = text.trim();
    if (!line) return;
    editor.remember(text);
    editor.set("");
    if (parseCommand(line)) return commands.run(line);
    const files = currentAttachments();
    setAttachments([]);
    if (chat.busyNow()) return outbox.add({ text: line, files });
    send(line, files);
  }

  async function openEditor() {
    const result = await editExternally(editor.current(), suspendTerminal);
    if ("problem" in result) return keys.setHint(result.problem);
    editor.set(result.text);
  }

  const draftRows = inputRows(editor.draft, columns);
  const queued = outbox.queue.slice(-3);
  const bodyHeight = Math.max(3, rows - 3 - draftRows.shown.length - (attachments.length ? 1 : 0) - queued.length);
  const finished = useMemo(() => chat.turns.flatMap((t) => linesOf(t, columns, paint)), [chat.turns, columns, paint]);
  const liveLines = useMemo(() => (chat.live ? layoutTurn(chat.live, columns, paint) : []), [chat.live, columns, paint]);
  const lines = liveLines.length ? [...finished, ...liveLines] : finished;
  const maxScroll = Math.max(0, lines.length - bodyHeight);
  const offset = Math.min(scroll, maxScroll);
  const visible = lines.slice(Math.max(0, lines.length - bodyHeight - offset), lines.length - offset);

  const keys = useKeys({
    client, editor, cwd, submit, openEditor: () => void openEditor(),
    busy: chat.busyNow,
    cancel: chat.cancel,
    note: chat.info,
    unqueue() {
      const message = outbox.takeLast();
      if (!message) return false;
      editor.set(message.text);
      setAttachments((list) => [...message.files, ...list.filter((a) => !message.files.some((f) => f.id === a.id))]);
      return true;
    },
    scroll: (by, page) => setScroll((s) => (by === "up" ? Math.min(maxScroll, s + (page ? bodyHeight - 1 : 1)) : Math.max(0, s - (page ? bodyHeight - 1 : 1)))),
  });

  // Ctrl+C, whatever is on screen: stops a reply when one is coming, else quits.
  useInput((input, key) => {
    if (!(key.ctrl && input === "c")) return;
    if (chat.busyNow()) return chat.cancel();
    quit();
  });

  useInput(
    (input, key) => {
      if (key.ctrl && input === "c") return;
      const mode = currentMode();
      if (mode.kind === "confirm") {
        if (input.toLowerCase() === "y") commands.save(mode.path, mode.content);
        else chat.info("Not saved.");
        return setMode({ kind: "chat" });
      }
      keys.handle(input, key);
    },
    { isActive: mode.kind === "chat" || mode.kind === "confirm" },
  );
  usePaste((text) => editor.type(text.replace(/\r\n?/g, "\n")), { isActive: mode.kind === "chat" && !keys.search });

  const elapsed = chat.busySince ? ((Date.now() - chat.busySince) / 1000).toFixed(1) : "";
  const spent = chat.cost === undefined ? "" : ` · ${dollars(chat.cost)}`;
  const tokens = chat.usage.input || chat.usage.output ? ` · ${chat.usage.input} → ${chat.usage.output} tokens${spent} this chat` : "";
  const header = [" parley", model ?? "(no model)", ...(settings.system ? ["system prompt on"] : []), ...(chat.conversationId ? [`#${chat.conversationId}`] : []), props.serverUrl].join(" · ");
  const unknown = unknownCommand(editor.draft.text);
  const search = keys.search;
  const status =
    mode.kind === "confirm" ? `${mode.path} exists. Overwrite it? (y/N)`
    : search ? `reverse search: ${search.query}▏ ${search.found ? "· Ctrl+R older · Enter takes it" : search.query ? "(no match)" : "(type part of an earlier prompt)"} · Esc cancels`
    : keys.hint ? keys.hint
    : unknown ? `${unknown} is not a command · Tab completes · /help lists them`
    : busy ? `${waitingText(chat.waiting, model ?? "", tick, elapsed)} · Esc or Ctrl+C cancels${outbox.queue.length ? ` · ${outbox.queue.length} queued` : ""}${tokens}`
    : offset > 0 ? `scrolled up ${offset} lines · PgDn to return`
    : `Enter send · Ctrl+J new line · /help${tokens}`;
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
        <HistoryPanel store={store} query={mode.query} height={bodyHeight} current={chat.conversationId} onNote={chat.info} onOpen={(id) => {
          close();
          const conversation = id === undefined ? undefined : store.load(id);
          if (conversation) commands.open(conversation);
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
      {queued.map((message, i) => (
        <Text key={`q${i}`} color={tone("gray")} wrap="truncate">
          {`⧗ queued${outbox.queue.length > 3 && i === 0 ? ` (+${outbox.queue.length - 3} more)` : ""}: ${message.text.replace(/\s+/g, " ")}${i === queued.length - 1 ? " · sent when the reply ends · ↑ on an empty line edits it" : ""}`}
        </Text>
      ))}
      {attachments.length ? (
        <Text color={tone("yellow")} wrap="truncate">{`+ ${attachments.map((a) => a.name).join(", ")} · goes with your next message · /detach drops`}</Text>
      ) : null}
      <Text color={tone("gray")}>{"─".repeat(columns)}</Text>
      <InputBox rows={search?.found ? inputRows(draftOf(search.found.text), columns) : draftRows} marked={!!unknown} />
      <Text color={tone("gray")} wrap="truncate">{status}</Text>
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
