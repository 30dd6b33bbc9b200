import { Text } from "ink";
import { layoutDraft, type Draft } from "../line-editor.ts";
import { tone } from "../style.ts";

/** The rows of the input box: up to five, scrolled to the cursor; the prompt red while the draft names no command. */
export function inputRows(draft: Draft, columns: number) {
  const input = layoutDraft(draft, Math.max(10, columns - 3));
  const firstRow = Math.max(0, Math.min(input.row - 4, input.rows.length - 5));
  return { ...input, firstRow, shown: input.rows.slice(firstRow, firstRow + 5) };
}

export function InputBox({ rows, marked }: { rows: ReturnType<typeof inputRows>; marked: boolean }) {
  return rows.shown.map((row, i) => {
    const here = rows.firstRow + i === rows.row;
    const chars = Array.from(row);
    let used = 0;
    let split = chars.length;
    for (const [n, char] of chars.entries()) {
      if (used >= rows.column) {
        split = n;
        break;
      }
      used += Bun.stringWidth(char);
    }
    return (
      <Text key={i} wrap="truncate">
        <Text color={tone(marked ? "red" : "cyan")}>{rows.firstRow + i === 0 ? "> " : "  "}</Text>
        {here ? chars.slice(0, split).join("") : row}
        {here ? <Text inverse>{chars[split] ?? " "}</Text> : null}
        {here ? chars.slice(split + 1).join("") : null}
      </Text>
    );
  });
}
