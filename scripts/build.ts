/**
 * `bun run build`: one executable, dist/parley, for this machine.
 * `bun run build --all`: linux-x64, linux-arm64, darwin-x64, darwin-arm64 and windows-x64, with SHA256SUMS.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { BunPlugin } from "bun";
import pkg from "../package.json" with { type: "json" };

const root = resolve(import.meta.dir, "..");
const dist = join(root, "dist");
const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "windows-x64"] as const;

/** Ink reaches for react-devtools-core only in development; the binary gets an empty stand-in. */
const noDevtools: BunPlugin = {
  name: "no-react-devtools",
  setup(build) {
    build.onResolve({ filter: /^react-devtools-core$/ }, () => ({ path: "react-devtools-core", namespace: "stub" }));
    build.onLoad({ filter: /.*/, namespace: "stub" }, () => ({ contents: "export default { connectToDevTools() {} };", loader: "js" }));
  },
};

/** The dashboard, bundled once for every target and put in the binary as the module ui-assets.ts stands for in a source checkout. */
async function bundleUi(): Promise<BunPlugin> {
  const result = await Bun.build({ entrypoints: [join(root, "ui/main.tsx")], minify: true, target: "browser", define: { "process.env.NODE_ENV": JSON.stringify("production") } });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error("the dashboard (ui/) failed to bundle");
  }
  const js = await result.outputs.find((o) => o.kind === "entry-point")!.text();
  const css = (await result.outputs.find((o) => o.path.endsWith(".css"))?.text()) ?? "";
  const contents = `export async function uiAssets() { return { js: ${JSON.stringify(js)}, css: ${JSON.stringify(css)} }; }`;
  return {
    name: "built-ui",
    setup(build) {
      build.onLoad({ filter: /[\\/]server[\\/]endpoints[\\/]ui-assets\.ts$/ }, () => ({ contents, loader: "js" }));
    },
  };
}

async function build(target?: (typeof TARGETS)[number]): Promise<string> {
  const outfile = join(dist, target ? `parley-${target}${target.startsWith("windows") ? ".exe" : ""}` : "parley");
  const result = await Bun.build({
    entrypoints: [join(root, "src/cli.ts")],
    compile: {
      outfile,
      ...(target ? { target: `bun-${target}` as Bun.Build.CompileTarget } : {}),
      // parley reads ./.env and its config itself, with its own precedence.
      autoloadDotenv: false,
      autoloadBunfig: false,
      // A gateway idles most of its life: collect garbage sooner and hold less memory.
      execArgv: ["--smol"],
    },
    minify: true,
    bytecode: true,
    format: "esm",
    // Lazy imports become chunks of their own: `serve` never reads the chat client, `chat` never the server.
    splitting: true,
    sourcemap: "none",
    define: { "process.env.NODE_ENV": JSON.stringify("production"), "process.env.DEV": JSON.stringify("false") },
    plugins: [noDevtools, await ui],
  });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error(`build failed for ${target ?? "this machine"}`);
  }
  return outfile;
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
const ui = bundleUi();
const all = process.argv.includes("--all");
const outputs = all ? await Promise.all(TARGETS.map(build)) : [await build()];
const sums = outputs.map((file) => `${createHash("sha256").update(readFileSync(file)).digest("hex")}  ${basename(file)}`);
writeFileSync(join(dist, "SHA256SUMS"), `${sums.join("\n")}\n`);
for (const file of outputs) console.log(`${basename(file).padEnd(26)} ${(statSync(file).size / 1024 / 1024).toFixed(1)} MB`);
console.log(`parley ${pkg.version}: ${outputs.length} binar${outputs.length === 1 ? "y" : "ies"} in dist/, checksums in dist/SHA256SUMS`);
