import type { Key } from "ink";

/** The draft being typed: its text, where the cursor is (an index into it), and the last killed text. */
export interface Draft {
  text: string;
  cursor: number;
  killed?: string;
}

export const EMPTY: Draft = { text: "", cursor: 0 };

export const draftOf = (text: string): Draft => ({ text, cursor: text.length });

/** A key with no flags set. */
export const PLAIN_KEY: Key = {
  upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false, home: false, end: false,
  return: false, escape: false, ctrl: false, shift: false, tab: false, backspace: false, delete: false, meta: false, super: false,
  hyper: false, capsLock: false, numLock: false,
};

/** What a key does to the draft; "up"/"down" when the cursor is already on the first/last line (history). */
export type EditResult = Draft | "up" | "down" | undefined;

export function editKey(draft: Draft, input: string, key: Key): EditResult {
  const { text, cursor } = draft;
  const at = (next: number) => ({ ...draft, cursor: Math.max(0, Math.min(text.length, next)) });
  const ctrl = key.ctrl && !key.meta;
  if (key.upArrow) return lineStart(text, cursor) === 0 ? "up" : at(verticalMove(text, cursor, -1));
  if (key.downArrow) return lineEnd(text, cursor) === text.length ? "down" : at(verticalMove(text, cursor, 1));
  if (key.leftArrow) return at(key.ctrl || key.meta ? wordStart(text, cursor) : previous(text, cursor));
  if (key.rightArrow) return at(key.ctrl || key.meta ? wordEnd(text, cursor) : next(text, cursor));
  if (key.home || (ctrl && input === "a")) return at(lineStart(text, cursor));
  if (key.end || (ctrl && input === "e")) return at(lineEnd(text, cursor));
  if (key.meta && input === "b") return at(wordStart(text, cursor));
  if (key.meta && input === "f") return at(wordEnd(text, cursor));
  if (ctrl && input === "b") return at(previous(text, cursor));
  if (ctrl && input === "f") return at(next(text, cursor));
  if ((ctrl && input === "w") || (key.meta && key.backspace)) return kill(draft, wordStart(text, cursor), cursor);
  if (key.meta && input === "d") return kill(draft, cursor, wordEnd(text, cursor));
  if (ctrl && input === "u") return kill(draft, lineStart(text, cursor), cursor);
  if (ctrl && input === "k") return kill(draft, cursor, lineEnd(text, cursor) === cursor ? Math.min(text.length, cursor + 1) : lineEnd(text, cursor));
  if (ctrl && input === "y") return draft.killed ? insert(draft, draft.killed) : draft;
  if (key.backspace) return cursor === 0 ? draft : { ...draft, text: text.slice(0, previous(text, cursor)) + text.slice(cursor), cursor: previous(text, cursor) };
  if (key.delete || (ctrl && input === "d")) return cursor === text.length ? draft : { ...draft, text: text.slice(0, cursor) + text.slice(next(text, cursor)) };
  return undefined;
}

export function insert(draft: Draft, added: string): Draft {
  const { text, cursor } = draft;
  return { ...draft, text: text.slice(0, cursor) + added + text.slice(cursor), cursor: cursor + added.length };
}

function kill(draft: Draft, from: number, to: number): Draft {
  if (from === to) return draft;
  return { text: draft.text.slice(0, from) + draft.text.slice(to), cursor: from, killed: draft.text.slice(from, to) };
}

const isLow = (text: string, i: number) => /[\udc00-\udfff]/.test(text[i] ?? "");
const previous = (text: string, i: number) => Math.max(0, i - (i > 1 && isLow(text, i - 1) ? 2 : 1));
const next = (text: string, i: number) => Math.min(text.length, i + (isLow(text, i + 1) ? 2 : 1));
const lineStart = (text: string, i: number) => text.lastIndexOf("\n", i - 1) + 1;
const lineEnd = (text: string, i: number) => (text.indexOf("\n", i) === -1 ? text.length : text.indexOf("\n", i));
const word = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}_]/u.test(c);

function wordStart(text: string, i: number): number {
  while (i > 0 && !word(text[i - 1])) i--;
  while (i > 0 && word(text[i - 1])) i--;
  return i;
}

function wordEnd(text: string, i: number): number {
  while (i < text.length && !word(text[i])) i++;
  while (i < text.length && word(text[i])) i++;
  return i;
}

function verticalMove(text: string, cursor: number, direction: 1 | -1): number {
  const start = lineStart(text, cursor);
  const column = cursor - start;
  const target = direction < 0 ? lineStart(text, start - 1) : lineEnd(text, cursor) + 1;
  return Math.min(target + column, lineEnd(text, target));
}

/** The draft as screen rows no wider than `width`, and the row and column the cursor is on. */
export function layoutDraft(draft: Draft, width: number): { rows: string[]; row: number; column: number } {
  const rows: string[] = [];
  let row = 0;
  let column = 0;
  let offset = 0;
  for (const line of draft.text.split("\n")) {
    const chars = Array.from(line);
    let current = "";
    let used = 0;
    let index = offset;
    const place = () => {
      if (index === draft.cursor) {
        row = rows.length;
        column = used;
      }
    };
    for (const char of chars) {
      const cells = Bun.stringWidth(char);
      if (used + cells > width) {
        rows.push(current);
        current = "";
        used = 0;
      }
      place();
      current += char;
      used += cells;
      index += char.length;
    }
    place();
    rows.push(current);
    offset = index + 1;
  }
  return { rows, row, column };
}
