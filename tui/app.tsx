import { existsSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { Box, Text, useApp, useInput, usePaste, useWindowSize } from "ink";
import { memo, useEffect, useMemo, useState } from "react";
import type { Client, Settings } from "./client.ts";
import { HELP, parseCommand } from "./commands.ts";
import { ModelPicker, SettingsPanel } from "./components/panels.tsx";
import { layoutTurn, toJson, toMarkdown, type Line, type Turn } from "./transcript.ts";
import { useChat } from "./use-chat.ts";
import { useLatestState } from "./use-latest.ts";

export interface AppProps {
  client: Client;
  serverUrl: string;
  model?: string;
  settings?: Settings;
  /** Where /save writes relative names; the working directory by default. */
  cwd?: string;
  /** Fixed size, for tests; the terminal's otherwise. */
  size?: { columns: number; rows: number };
}

type Mode =
  | { kind: "chat" }
  | { kind: "picker"; models: string[] }
  | { kind: "settings" }
  | { kind: "confirm"; path: string; content: string };

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const layouts = new WeakMap<Turn, { width: number; lines: Line[] }>();

/** A finished turn is laid out once per width; only the live reply is laid out again as it grows. */
function linesOf(turn: Turn, width: number): Line[] {
  const cached = layouts.get(turn);
  if (cached?.width === width) return cached.lines;
  const lines = layoutTurn(turn, width);
  layouts.set(turn, { width, lines });
  return lines;
}

export function App(props: AppProps) {
  const { client } = props;
  const { exit } = useApp();
  const window = useWindowSize();
  const { columns, rows } = props.size ?? { columns: window.columns || 80, rows: window.rows || 24 };
  const chat = useChat(client);
  const [model, setModel] = useState(props.model);
  const [settings, setSettings] = useState<Settings>(props.settings ?? { system: "", stream: true });
  const [mode, setMode, currentMode] = useLatestState<Mode>({ kind: "chat" });
  const [draft, setDraft, currentDraft] = useLatestState("");
  const [scroll, setScroll] = useLatestState(0);
  const [tick, setTick] = useState(0);
  const busy = chat.busySince !== undefined;

  useEffect(() => {
    if (model) return;
    client.models().then(
      (models) => (models[0] ? setModel(models[0]) : chat.error("The server lists no models: configure a provider, then /model <name>.")),
      (error) => chat.error(`Could not list models: ${error.message}`),
    );
  }, []);

  useEffect(() => {
    if (!busy) return;
    const timer = setInterval(() => setTick((t) => t + 1), 100);
    return () => clearInterval(timer);
  }, [busy]);

  const inputLines = draft.split("\n").slice(-5);
  const bodyHeight = Math.max(3, rows - 3 - inputLines.length);
  const finished = useMemo(() => chat.turns.flatMap((t) => linesOf(t, columns)), [chat.turns, columns]);
  const lines = chat.live ? [...finished, ...layoutTurn(chat.live, columns)] : finished;
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
    setDraft("");
    if (!line) return;
    if (busy && !line.startsWith("/")) {
      setDraft(text);
      return chat.info("A reply is still coming: wait, or press Esc to cancel it.");
    }
    run(line);
  }

  function run(line: string) {
    const command = parseCommand(line);
    if (!command) {
      if (!model) return chat.error("No model yet: choose one with /model.");
      setScroll(0);
      return void chat.send(line, model, settings);
    }
    switch (command.name) {
      case "model":
        if (command.arg) {
          setModel(command.arg);
          return chat.info(`Model: ${command.arg}`);
        }
        return void client.models().then(
          (models) => setMode({ kind: "picker", models }),
          (error) => chat.error(`Could not list models: ${error.message}`),
        );
      case "settings":
        return setMode({ kind: "settings" });
      case "save": {
        if (!command.arg) return chat.error("Usage: /save <filename> (.json for JSON, anything else for Markdown)");
        const path = resolve(props.cwd ?? process.cwd(), command.arg);
        const content = path.endsWith(".json") ? toJson(chat.turns, model ?? "", settings) : toMarkdown(chat.turns, model ?? "");
        if (existsSync(path)) return setMode({ kind: "confirm", path, content });
        return save(path, content);
      }
      case "help":
        return chat.info(HELP);
      case "clear":
        setScroll(0);
        return chat.clear();
      case "exit":
        chat.cancel();
        return exit();
      case "unknown":
        return chat.info(`Unknown command ${command.arg}: nothing was sent. /help lists the commands.`);
    }
  }

  useInput(
    (input, key) => {
      const mode = currentMode();
      if (mode.kind === "picker" || mode.kind === "settings") return;
      if (mode.kind === "confirm") {
        if (input.toLowerCase() === "y") save(mode.path, mode.content);
        else chat.info("Not saved.");
        return setMode({ kind: "chat" });
      }
      if (key.escape) {
        if (busy) chat.cancel();
        return;
      }
      if (key.pageUp || (key.shift && key.upArrow)) return setScroll((s) => Math.min(maxScroll, s + (key.pageUp ? bodyHeight - 1 : 1)));
      if (key.pageDown || (key.shift && key.downArrow)) return setScroll((s) => Math.max(0, s - (key.pageDown ? bodyHeight - 1 : 1)));
      if (key.return && (key.meta || key.shift)) return setDraft((d) => `${d}\n`);
      if (key.return) return submit(currentDraft());
      if (key.backspace || key.delete) return setDraft((d) => d.slice(0, -1));
      if (key.ctrl || key.meta || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow || key.tab) return;
      // Fast typing arrives as one chunk: a carriage return in it sends, a line feed (Ctrl+J) is a new line.
      const [first = "", ...after] = input.split("\r");
      if (after.length === 0) return setDraft((d) => d + first);
      submit(currentDraft() + first);
      setDraft(after.at(-1) ?? "");
    },
    { isActive: mode.kind === "chat" || mode.kind === "confirm" },
  );
  usePaste((text) => setDraft((d) => d + text.replace(/\r\n?/g, "\n")), { isActive: mode.kind === "chat" });

  const elapsed = chat.busySince ? ((Date.now() - chat.busySince) / 1000).toFixed(1) : "";
  return (
    <Box flexDirection="column" width={columns} height={rows}>
      <Text inverse>{` parley · ${model ?? "(no model)"} · ${props.serverUrl}`.padEnd(columns).slice(0, columns)}</Text>
      {mode.kind === "picker" ? (
        <ModelPicker models={mode.models} current={model} height={bodyHeight} onPick={(picked) => {
          setMode({ kind: "chat" });
          if (picked) {
            setModel(picked);
            chat.info(`Model: ${picked}`);
          }
        }} />
      ) : mode.kind === "settings" ? (
        <SettingsPanel settings={settings} height={bodyHeight} onChange={setSettings} onClose={() => setMode({ kind: "chat" })} />
      ) : (
        <Viewport lines={visible} height={bodyHeight} />
      )}
      <Text color="gray">{"─".repeat(columns)}</Text>
      {inputLines.map((line, i) => (
        <Text key={i}>
          <Text color="cyan">{i === 0 ? "> " : "  "}</Text>
          {line}
          {i === inputLines.length - 1 ? <Text inverse> </Text> : null}
        </Text>
      ))}
      <Text color="gray">
        {mode.kind === "confirm"
          ? `${mode.path} exists. Overwrite it? (y/N)`
          : busy
            ? `${SPINNER[tick % SPINNER.length]} waiting for ${model} · ${elapsed}s · Esc cancels`
            : offset > 0
              ? `scrolled up ${offset} lines · PgDn to return`
              : "Enter send · Alt+Enter new line · /help"}
      </Text>
    </Box>
  );
}

const Viewport = memo(function Viewport({ lines, height }: { lines: Line[]; height: number }) {
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      {lines.map((line, i) => (
        <Text key={i} color={line.color} dimColor={line.dim} wrap="truncate">
          {line.text || " "}
        </Text>
      ))}
    </Box>
  );
});
