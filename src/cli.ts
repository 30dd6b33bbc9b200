#!/usr/bin/env -S bun --no-env-file
import "./commands/color.ts";

// citty and consola read NO_COLOR when they load: everything else loads after color.ts has set it,
// through a dynamic import, since the binary's bundler may hoist shared static imports above it.
const { run } = await import("./commands/main.ts");
await run(process.argv.slice(2));
