import type { Key } from "ink";
import { useRef } from "react";
import { draftOf, editKey, EMPTY, insert, type Draft } from "./line-editor.ts";
import { createPromptHistory } from "./prompt-history.ts";
import type { ChatStore } from "./store.ts";
import { useLatestState } from "./use-latest.ts";

/** The input line: the draft with its cursor, editing keys, and Up/Down through prompts kept in the store. */
export function useEditor(store: ChatStore) {
  const [draft, setDraft, currentDraft] = useLatestState<Draft>(EMPTY);
  const history = useRef<ReturnType<typeof createPromptHistory>>(undefined);
  history.current ??= createPromptHistory(store.prompts());
  const prompts = history.current;
  // Drafts thrown away with Esc Esc, newest last: Ctrl+Z brings them back.
  const cleared = useRef<string[]>([]);

  return {
    draft,
    current: () => currentDraft().text,
    set: (text: string) => setDraft(draftOf(text)),
    type: (text: string) => setDraft((d) => insert(d, text)),
    /** Empties the draft; the text is kept for `restore`. */
    clear() {
      prompts.reset();
      const text = currentDraft().text;
      if (text.trim()) cleared.current.push(text);
      setDraft(EMPTY);
    },
    /** The last cleared draft back (the current one, if any, is kept in its place); false when none. */
    restore(): boolean {
      const text = cleared.current.pop();
      if (text === undefined) return false;
      if (currentDraft().text.trim()) cleared.current.unshift(currentDraft().text);
      setDraft(draftOf(text));
      return true;
    },
    /** Reverse search through the prompts typed (Ctrl+R). */
    find: (query: string, before?: number) => prompts.find(query, before),
    /** A prompt or command that was submitted: kept for Up-arrow recall, here and in later sessions. */
    remember(text: string) {
      prompts.add(text);
      store.addPrompt(text);
    },
    /** Applies an editing key; false when the key is not an editing key. */
    key(input: string, key: Key): boolean {
      const result = editKey(currentDraft(), input, key);
      if (result === undefined) return false;
      if (result === "up" || result === "down") {
        const recalled = result === "up" ? prompts.older(currentDraft().text) : prompts.newer();
        if (recalled !== undefined) setDraft(draftOf(recalled));
        return true;
      }
      setDraft(result);
      return true;
    },
  };
}
