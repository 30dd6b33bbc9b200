import type { Key } from "ink";
import type { Client } from "./client.ts";
import { complete } from "./completion.ts";
import { PLAIN_KEY } from "./line-editor.ts";
import type { useEditor } from "./use-editor.ts";
import { useLatestState } from "./use-latest.ts";

/** Ctrl+R's state: what is typed, and the prompt it found (its place in the history). */
export type Search = { query: string; found?: { text: string; index: number } };

export interface KeyContext {
  client: Client;
  editor: ReturnType<typeof useEditor>;
  cwd: string;
  busy: () => boolean;
  cancel: () => void;
  submit: (text: string) => void;
  /** Takes the last queued message back into the editor; false when none is queued. */
  unqueue: () => boolean;
  scroll: (by: "up" | "down", page: boolean) => void;
  openEditor: () => void;
  note: (text: string) => void;
}

/**
 * The chat's keys beyond plain editing: Enter and new lines (Ctrl+J however it comes), Esc that
 * asks twice before clearing, Ctrl+Z, Tab completion, Ctrl+R search, Ctrl+G / Ctrl+X Ctrl+E for
 * $EDITOR, ↑ on an empty draft for a queued message. `hint` is what the status line should say.
 */
export function useKeys(k: KeyContext) {
  const { editor } = k;
  const [hint, setHint, currentHint] = useLatestState<string | undefined>(undefined);
  const [search, setSearch, currentSearch] = useLatestState<Search | undefined>(undefined);
  const [armed, setArmed, currentArmed] = useLatestState<"escape" | "ctrl-x" | undefined>(undefined);
  const [, setModels, currentModels] = useLatestState<{ id: string; provider?: string }[] | undefined>(undefined);

  function tab() {
    const draft = editor.current();
    if (/^\/model\s+\S*$/.test(draft) && !currentModels()) {
      return void k.client.models().then(
        (list) => {
          setModels(list);
          tab();
        },
        (error) => setHint(`Could not list models: ${error.message}`),
      );
    }
    const result = complete(draft, { models: currentModels() ?? [], cwd: k.cwd });
    if (!result) return setHint(draft.startsWith("/") ? "Tab: nothing fits" : undefined);
    if (result.text !== draft) editor.set(result.text);
    setHint(result.choices.length ? `Tab: ${result.choices.join("  ")}` : undefined);
  }

  function searchKey(input: string, key: Key, state: Search) {
    const find = (query: string) => setSearch({ query, found: editor.find(query) });
    if (key.escape || (key.ctrl && (input === "g" || input === "c"))) return setSearch(undefined);
    if (key.ctrl && input === "r") return setSearch({ ...state, found: (state.found && editor.find(state.query, state.found.index)) ?? state.found });
    if (key.backspace || key.delete) return find(state.query.slice(0, -1));
    if (input && !key.ctrl && !key.meta && !key.return && !/[\x00-\x1f]/.test(input)) return find(state.query + input);
    // Enter, or any other key: the prompt found goes into the editor, to change or send.
    setSearch(undefined);
    if (state.found) editor.set(state.found.text);
  }

  function handle(input: string, key: Key) {
    const state = currentSearch();
    if (state) return searchKey(input, key, state);
    const was = currentArmed();
    if (was) setArmed(undefined);
    if (currentHint()) setHint(undefined);
    if (was === "ctrl-x" && key.ctrl && input === "e") return k.openEditor();
    if (key.escape) {
      if (k.busy()) return k.cancel();
      if (!editor.current()) return;
      if (was !== "escape") {
        setArmed("escape");
        return setHint("Esc again clears the draft (Ctrl+Z brings it back)");
      }
      editor.clear();
      return setHint("Draft cleared · Ctrl+Z brings it back");
    }
    if (key.ctrl && input === "z") return editor.restore() || setHint("No cleared draft to bring back.");
    if (key.ctrl && input === "r") return setSearch({ query: "" });
    if (key.ctrl && input === "g") return k.openEditor();
    if (key.ctrl && input === "x") return setArmed("ctrl-x");
    if (key.tab) return tab();
    if ((key.ctrl && input === "j") || input === "\n") return editor.type("\n");
    if (key.upArrow && !editor.current() && k.unqueue()) return setHint("Back from the queue: Enter queues it again, Ctrl+U drops it");
    if (key.pageUp || (key.shift && key.upArrow)) return k.scroll("up", key.pageUp);
    if (key.pageDown || (key.shift && key.downArrow)) return k.scroll("down", key.pageDown);
    if (key.return && (key.meta || key.shift)) return editor.type("\n");
    if (key.return) return k.submit(editor.current());
    if (editor.key(input, key)) return;
    if (key.ctrl || key.meta) return;
    // Keys pressed quickly arrive as one chunk of text: a carriage return in it sends, a line feed
    // (Ctrl+J) is a new line, and other control bytes are the Ctrl+letter keys they stand for.
    for (const part of input.split(/([\x00-\x1f])/)) {
      if (part === "\r") k.submit(editor.current());
      else if (part === "\n") editor.type("\n");
      else if (/^[\x00-\x1f]$/.test(part)) handle(String.fromCharCode(part.charCodeAt(0) + 96), { ...PLAIN_KEY, ctrl: true });
      else if (part) editor.type(part);
    }
  }

  return { handle, hint, search, armed, setHint };
}
