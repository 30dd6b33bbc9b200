import { describe, expect, test } from "bun:test";
import type { Key } from "ink";
import { draftOf, editKey, layoutDraft, type Draft } from "../../tui/line-editor.ts";
import { createPromptHistory } from "../../tui/prompt-history.ts";

const none: Key = {
  upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false, home: false, end: false,
  return: false, escape: false, ctrl: false, shift: false, tab: false, backspace: false, delete: false, meta: false, super: false,
  hyper: false, capsLock: false, numLock: false,
};
const press = (draft: Draft, input: string, key: Partial<Key> = {}) => editKey(draft, input, { ...none, ...key }) as Draft;
const at = (text: string, cursor: number): Draft => ({ text, cursor });
const shown = (d: Draft) => `${d.text.slice(0, d.cursor)}|${d.text.slice(d.cursor)}`;

describe("line editor", () => {
  test("moves by character, word and line", () => {
    const d = draftOf("one two three");
    expect(shown(press(d, "", { leftArrow: true }))).toBe("one two thre|e");
    expect(shown(press(d, "b", { meta: true }))).toBe("one two |three");
    expect(shown(press(at("one two three", 4), "f", { meta: true }))).toBe("one two| three");
    expect(shown(press(d, "", { leftArrow: true, ctrl: true }))).toBe("one two |three");
    expect(shown(press(d, "a", { ctrl: true }))).toBe("|one two three");
    expect(shown(press(at("one two three", 0), "e", { ctrl: true }))).toBe("one two three|");
    expect(shown(press(at("ab\ncd", 4), "", { home: true }))).toBe("ab\n|cd");
    expect(shown(press(at("ab\ncd", 1), "", { end: true }))).toBe("ab|\ncd");
  });

  test("kills words and line parts, and yanks them back", () => {
    expect(shown(press(draftOf("foo bar  "), "w", { ctrl: true }))).toBe("foo |");
    expect(shown(press(draftOf("foo bar"), "", { backspace: true, meta: true }))).toBe("foo |");
    expect(shown(press(at("foo bar", 4), "u", { ctrl: true }))).toBe("|bar");
    const killed = press(at("foo bar", 3), "k", { ctrl: true });
    expect(shown(killed)).toBe("foo|");
    expect(shown(press(killed, "y", { ctrl: true }))).toBe("foo bar|");
    expect(shown(press(at("ab\ncd", 2), "k", { ctrl: true }))).toBe("ab|cd");
    expect(shown(press(at("ab\ncd", 4), "u", { ctrl: true }))).toBe("ab\n|d");
  });

  test("backspace and delete, and a character outside the BMP as one", () => {
    expect(shown(press(at("abc", 1), "", { delete: true }))).toBe("a|c");
    expect(shown(press(draftOf("a😀"), "", { backspace: true }))).toBe("a|");
    expect(shown(press(draftOf("a😀"), "", { leftArrow: true }))).toBe("a|😀");
    expect(press(at("abc", 0), "", { backspace: true })).toEqual(at("abc", 0));
  });

  test("Up/Down move between lines, and hand over to history at the first and last line", () => {
    expect(shown(press(at("long line\nab", 12), "", { upArrow: true }))).toBe("lo|ng line\nab");
    expect(shown(press(at("ab\nlong line", 1), "", { downArrow: true }))).toBe("ab\nl|ong line");
    expect(editKey(at("ab\ncd", 1), "", { ...none, upArrow: true })).toBe("up");
    expect(editKey(at("ab\ncd", 4), "", { ...none, downArrow: true })).toBe("down");
    expect(editKey(draftOf("x"), "x", none)).toBeUndefined();
  });

  test("the draft is laid out in rows of the width, with the cursor's row and column", () => {
    expect(layoutDraft(at("abcdef\ngh", 8), 4)).toEqual({ rows: ["abcd", "ef", "gh"], row: 2, column: 1 });
    expect(layoutDraft(at("漢字漢字", 2), 4)).toEqual({ rows: ["漢字", "漢字"], row: 1, column: 0 });
    expect(layoutDraft(at("", 0), 4)).toEqual({ rows: [""], row: 0, column: 0 });
  });
});

test("prompt history: Up goes back, Down comes forward and gives the unsent draft back", () => {
  const history = createPromptHistory(["one", "two"]);
  expect(history.newer()).toBeUndefined();
  expect(history.older("draft")).toBe("two");
  expect(history.older("two")).toBe("one");
  expect(history.older("one")).toBeUndefined();
  expect(history.newer()).toBe("two");
  expect(history.newer()).toBe("draft");
  history.add("three");
  history.add("three");
  expect(history.older("")).toBe("three");
  expect(history.older("")).toBe("two");
});
