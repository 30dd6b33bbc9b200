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
    /** The newest prompt older than `before` (an index; the end when undefined) that contains `query`. */
    find(query: string, before = list.length): { text: string; index: number } | undefined {
      const needle = query.toLowerCase();
      for (let i = Math.min(before, list.length) - 1; i >= 0; i--) if (list[i]!.toLowerCase().includes(needle)) return { text: list[i]!, index: i };
      return undefined;
    },
    reset() {
      index = list.length;
    },
  };
}
