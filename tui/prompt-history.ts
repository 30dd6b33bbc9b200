/**
 * Up/Down through earlier prompts, as a shell does: the first Up keeps the unsent draft, which
 * Down past the newest entry gives back.
 */
export function createPromptHistory(entries: string[]) {
  const list = [...entries];
  let index = list.length;
  let kept = "";
  return {
    older(draft: string): string | undefined {
      if (index === 0) return undefined;
      if (index === list.length) kept = draft;
      return list[--index];
    },
    newer(): string | undefined {
      if (index >= list.length) return undefined;
      index++;
      return index === list.length ? kept : list[index];
    },
    add(text: string) {
      if (list.at(-1) !== text) list.push(text);
      index = list.length;
    },
    reset() {
      index = list.length;
    },
  };
}
