import { Box, Text, useInput } from "ink";
import { useMemo } from "react";
import type { ChatStore, ConversationSummary } from "../store.ts";
import { tone } from "../style.ts";
import { useLatestState } from "../use-latest.ts";

/**
 * `/history`: earlier conversations, newest first. Typing searches their text (and titles); ↑/↓
 * and Enter open one; Ctrl+R renames it (Ctrl+U clears the title), Ctrl+D twice deletes it; Esc goes back.
 */
export function HistoryPanel(props: { store: ChatStore; query?: string; height: number; current?: number; onOpen: (id?: number) => void; onNote: (text: string) => void }) {
  const { store, height } = props;
  const [query, setQuery, currentQuery] = useLatestState(props.query ?? "");
  const initial = useMemo(() => store.search(props.query ?? ""), []);
  const [list, setList, currentList] = useLatestState<ConversationSummary[]>(initial);
  const [index, setIndex, currentIndex] = useLatestState(0);
  const [renaming, setRenaming, currentRenaming] = useLatestState<string | undefined>(undefined);
  const [deleting, setDeleting, currentDeleting] = useLatestState<number | undefined>(undefined);
  const search = (text: string) => {
    setQuery(text);
    setList(store.search(text));
    setIndex(0);
  };

  useInput((input, key) => {
    const chosen = currentList()[currentIndex()];
    const title = currentRenaming();
    if (title !== undefined) {
      if (key.escape) return setRenaming(undefined);
      if (key.return) {
        if (chosen && title.trim()) store.rename(chosen.id, title);
        setRenaming(undefined);
        return setList(store.search(currentQuery()));
      }
      if (key.backspace || key.delete) return setRenaming(title.slice(0, -1));
      // Ctrl+U clears the field, as it clears a line in a shell and in the prompt.
      if (key.ctrl && input === "u") return setRenaming("");
      if (input && !key.ctrl && !key.meta && !/[\x00-\x1f]/.test(input)) setRenaming(title + input);
      return;
    }
    if (key.ctrl && input === "d") {
      if (!chosen) return;
      if (currentDeleting() !== chosen.id) return setDeleting(chosen.id);
      store.deleteConversation(chosen.id);
      setDeleting(undefined);
      props.onNote(`Deleted conversation #${chosen.id}${chosen.id === props.current ? " (the one open: it is kept on screen until /new)" : ""}.`);
      const next = store.search(currentQuery());
      setList(next);
      return setIndex((i) => Math.max(0, Math.min(i, next.length - 1)));
    }
    setDeleting(undefined);
    if (key.ctrl && input === "r") return chosen && setRenaming(chosen.title);
    const count = currentList().length;
    if (key.upArrow) setIndex((i) => Math.max(0, i - 1));
    else if (key.downArrow) setIndex((i) => Math.min(count - 1, i + 1));
    else if (key.pageUp) setIndex((i) => Math.max(0, i - (height - 3)));
    else if (key.pageDown) setIndex((i) => Math.min(count - 1, i + (height - 3)));
    else if (key.return) props.onOpen(chosen?.id);
    else if (key.escape) props.onOpen(undefined);
    else if (key.backspace || key.delete) search(currentQuery().slice(0, -1));
    else if (input && !key.ctrl && !key.meta && !/[\x00-\x1f]/.test(input)) search(currentQuery() + input);
  });

  const room = Math.max(1, height - 3);
  const first = Math.min(Math.max(0, index - Math.floor(room / 2)), Math.max(0, list.length - room));
  const chosen = list[index];
  return (
    <Box flexDirection="column" height={height}>
      <Text bold wrap="truncate">{`Conversations · search: ${query || "(type words)"} · Enter opens · Ctrl+R renames · Ctrl+D deletes · Esc back`}</Text>
      <Text color={tone(deleting !== undefined ? "red" : "yellow")} wrap="truncate">
        {renaming !== undefined
          ? <>{"New title: "}<Text inverse>{`${renaming} `}</Text>{" (Enter keeps, Esc cancels)"}</>
          : deleting !== undefined && chosen
            ? `Delete #${chosen.id} "${chosen.title}" for good? Ctrl+D again deletes; any other key keeps it.`
            : " "}
      </Text>
      {list.length === 0 ? <Text>{query ? "(no conversation has these words)" : "(nothing here yet)"}</Text> : null}
      {list.slice(first, first + room).map((c, i) => (
        <Text key={c.id} color={first + i === index ? tone("green") : undefined} wrap="truncate">
          {first + i === index ? "❯ " : "  "}
          {`#${c.id}  ${new Date(c.updatedAt).toLocaleString()}  ${c.model}  ${c.title} (${c.turns} prompt${c.turns === 1 ? "" : "s"})${c.match ? `  … ${c.match.replace(/\s+/g, " ")}` : ""}`}
        </Text>
      ))}
    </Box>
  );
}
