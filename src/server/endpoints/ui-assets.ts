import { join } from "node:path";

export interface UiAssets {
  js: string;
  css: string;
}

/**
 * The dashboard's script and style sheet. From a source checkout they are bundled from ui/ by Bun's
 * bundler on the first request for them (a second or so, once); `bun run build` replaces this module
 * with one holding the bundle made at build time (scripts/build.ts), so the binary reads no file.
 */
export async function uiAssets(): Promise<UiAssets> {
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "../../../ui/main.tsx")],
    minify: true,
    target: "browser",
    define: { "process.env.NODE_ENV": JSON.stringify("production") },
  });
  if (!result.success) throw new AggregateError(result.logs, "the dashboard could not be bundled");
  const js = result.outputs.find((o) => o.kind === "entry-point")!;
  const css = result.outputs.find((o) => o.path.endsWith(".css"));
  return { js: await js.text(), css: css ? await css.text() : "" };
}
