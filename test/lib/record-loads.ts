// Preloaded into a CLI process by tests of what it loads: prints `loaded <path>` on stderr for each of parley's source files.
import { plugin } from "bun";
import { readFileSync } from "node:fs";

plugin({
  name: "record-loads",
  setup(build) {
    build.onLoad({ filter: /\/(src|tui)\/.*\.tsx?$/ }, ({ path }) => {
      process.stderr.write(`loaded ${path}\n`);
      return { contents: readFileSync(path, "utf8"), loader: path.endsWith(".tsx") ? "tsx" : "ts" };
    });
  },
});
