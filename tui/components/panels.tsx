import { Box, Text, useInput } from "ink";
import type { Settings } from "../client.ts";
import { useLatestState } from "../use-latest.ts";

/** Pick one of the server's models with ↑/↓ and Enter; Esc leaves the model as it was. */
export function ModelPicker(props: { models: string[]; current?: string; height: number; onPick: (model?: string) => void }) {
  const { models, height } = props;
  const [index, setIndex, currentIndex] = useLatestState(Math.max(0, models.indexOf(props.current ?? "")));
  useInput((_input, key) => {
    if (key.upArrow) setIndex((i) => Math.max(0, i - 1));
    if (key.downArrow) setIndex((i) => Math.min(models.length - 1, i + 1));
    if (key.return) props.onPick(models[currentIndex()]);
    if (key.escape) props.onPick(undefined);
  });
  const room = Math.max(1, height - 2);
  const first = Math.min(Math.max(0, index - Math.floor(room / 2)), Math.max(0, models.length - room));
  return (
    <Box flexDirection="column" height={height}>
      <Text bold>Pick a model (↑/↓, Enter; Esc to cancel)</Text>
      {models.slice(first, first + room).map((model, i) => (
        <Text key={model} color={first + i === index ? "green" : undefined}>
          {first + i === index ? "❯ " : "  "}
          {model}
          {model === props.current ? "  (current)" : ""}
        </Text>
      ))}
    </Box>
  );
}

const FIELDS = ["temperature", "maxTokens", "system", "stream"] as const;
type Field = (typeof FIELDS)[number];
const LABELS: Record<Field, string> = { temperature: "Temperature", maxTokens: "Max tokens", system: "System prompt", stream: "Streaming" };

/** Settings: ↑/↓ to choose, Enter to edit (or toggle streaming), Enter to keep, Esc to go back. */
export function SettingsPanel(props: { settings: Settings; height: number; onChange: (settings: Settings) => void; onClose: () => void }) {
  const [index, setIndex, currentIndex] = useLatestState(0);
  const [draft, setDraft, currentDraft] = useLatestState<string | undefined>(undefined);
  const [settings, setSettings, currentSettings] = useLatestState(props.settings);
  const [problem, setProblem] = useLatestState<string | undefined>(undefined);
  const change = (next: Settings) => {
    setSettings(next);
    props.onChange(next);
  };

  useInput((input, key) => {
    const field = FIELDS[currentIndex()]!;
    const draft = currentDraft();
    const settings = currentSettings();
    if (draft !== undefined) {
      if (key.escape) return setDraft(undefined);
      if (key.return) {
        const result = apply(settings, field, draft);
        if (typeof result === "string") return setProblem(result);
        setProblem(undefined);
        setDraft(undefined);
        return change(result);
      }
      if (key.backspace || key.delete) return setDraft(draft.slice(0, -1));
      if (!key.ctrl && !key.meta && input) setDraft(draft + input);
      return;
    }
    if (key.escape) return props.onClose();
    if (key.upArrow) setIndex((i) => Math.max(0, i - 1));
    if (key.downArrow) setIndex((i) => Math.min(FIELDS.length - 1, i + 1));
    if (key.return) {
      if (field === "stream") return change({ ...settings, stream: !settings.stream });
      setDraft(show(settings, field) === "(default)" ? "" : show(settings, field));
    }
  });

  return (
    <Box flexDirection="column" height={props.height}>
      <Text bold>Settings (↑/↓ choose · Enter edit · Esc back)</Text>
      {FIELDS.map((f, i) => (
        <Text key={f} color={i === index ? "green" : undefined}>
          {i === index ? "❯ " : "  "}
          {LABELS[f].padEnd(15)}
          {i === index && draft !== undefined ? <Text inverse>{`${draft} `}</Text> : show(settings, f)}
        </Text>
      ))}
      {problem ? <Text color="red">{problem}</Text> : null}
    </Box>
  );
}

function show(settings: Settings, field: Field): string {
  const value = settings[field];
  if (field === "stream") return value ? "on" : "off";
  if (value === undefined || value === "") return "(default)";
  return String(value);
}

function apply(settings: Settings, field: Field, text: string): Settings | string {
  const value = text.trim();
  if (field === "system") return { ...settings, system: value };
  if (value === "") return { ...settings, [field]: undefined };
  const number = Number(value);
  if (field === "temperature") {
    return Number.isFinite(number) && number >= 0 && number <= 2 ? { ...settings, temperature: number } : "Temperature is a number from 0 to 2.";
  }
  return Number.isInteger(number) && number > 0 ? { ...settings, maxTokens: number } : "Max tokens is a positive whole number.";
}
