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

  return {
    draft,
    current: () => currentDraft().text,
    set: (text: string) => setDraft(draftOf(text)),
    type: (text: string) => setDraft((d) => insert(d, text)),
    clear() {
      prompts.reset();
      setDraft(EMPTY);
    },
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
