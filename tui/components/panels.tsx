import { Box, Text, useInput } from "ink";
import type { Settings } from "../client.ts";
import { apply, FIELDS, LABELS, show } from "../settings.ts";
import { tone } from "../style.ts";
import { useLatestState } from "../use-latest.ts";

/** Pick one item with ↑/↓ and Enter; typing filters the list; Esc picks nothing. */
export function Picker<T>(props: { title: string; items: { label: string; value: T }[]; initial?: number; height: number; onPick: (value?: T) => void }) {
  const { height } = props;
  const [filter, setFilter, currentFilter] = useLatestState("");
  const [index, setIndex, currentIndex] = useLatestState(Math.max(0, Math.min(props.items.length - 1, props.initial ?? 0)));
  const matching = (text: string) => (text ? props.items.filter((item) => item.label.toLowerCase().includes(text.toLowerCase())) : props.items);
  const items = matching(filter);
  const refine = (text: string) => {
    setFilter(text);
    setIndex(0);
  };
  useInput((input, key) => {
    const count = matching(currentFilter()).length;
    if (key.upArrow) setIndex((i) => Math.max(0, i - 1));
    else if (key.downArrow) setIndex((i) => Math.min(count - 1, i + 1));
    else if (key.pageUp) setIndex((i) => Math.max(0, i - (height - 2)));
    else if (key.pageDown) setIndex((i) => Math.min(count - 1, i + (height - 2)));
    else if (key.return) props.onPick(matching(currentFilter())[currentIndex()]?.value);
    else if (key.escape) props.onPick(undefined);
    else if (key.backspace || key.delete) refine(currentFilter().slice(0, -1));
    else if (input && !key.ctrl && !key.meta && !/[\x00-\x1f]/.test(input)) refine(currentFilter() + input);
  });
  const room = Math.max(1, height - 2);
  const first = Math.min(Math.max(0, index - Math.floor(room / 2)), Math.max(0, items.length - room));
  return (
    <Box flexDirection="column" height={height}>
      <Text bold>{`${props.title} (type to filter${filter ? `: ${filter}` : ""}; ↑/↓, Enter; Esc to cancel)`}</Text>
      {items.length === 0 ? <Text>{filter ? "(nothing matches)" : "(nothing here yet)"}</Text> : null}
      {items.slice(first, first + room).map((item, i) => (
        <Text key={first + i} color={first + i === index ? tone("green") : undefined} wrap="truncate">
          {first + i === index ? "❯ " : "  "}
          {item.label}
        </Text>
      ))}
    </Box>
  );
}

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
      <Text bold>Settings (↑/↓ choose · Enter edit · Esc back) · kept for next time</Text>
      {FIELDS.map((f, i) => (
        <Text key={f} color={i === index ? tone("green") : undefined}>
          {i === index ? "❯ " : "  "}
          {LABELS[f].padEnd(15)}
          {i === index && draft !== undefined ? <Text inverse>{`${draft} `}</Text> : show(settings, f)}
        </Text>
      ))}
      {problem ? <Text color={tone("red")}>{problem}</Text> : null}
    </Box>
  );
}
