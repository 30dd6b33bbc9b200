import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Opens `text` in $VISUAL, else $EDITOR, else vi, with the terminal handed over (`suspend` gives
 * it back after); resolves to the saved text, or a sentence saying why there is none.
 */
export async function editExternally(text: string, suspend: (run: () => Promise<void>) => Promise<void>): Promise<{ text: string } | { problem: string }> {
  const editor = process.env.VISUAL || process.env.EDITOR || "vi";
  const dir = mkdtempSync(join(tmpdir(), "parley-draft-"));
  const file = join(dir, "draft.md");
  writeFileSync(file, text);
  try {
    let code: number | null = null;
    // Through the shell: EDITOR may carry arguments ("code --wait").
    await suspend(async () => {
      code = await Bun.spawn(["sh", "-c", `${editor} "$1"`, "sh", file], { stdio: ["inherit", "inherit", "inherit"] }).exited;
    });
    if (code !== 0) return { problem: `${editor} exited with ${code}: the draft is as it was.` };
    return { text: readFileSync(file, "utf8").replace(/\r?\n$/, "") };
  } catch (error) {
    return { problem: `Could not run ${editor}: ${error instanceof Error ? error.message : error}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
