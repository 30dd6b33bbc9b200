import { defineCommand } from "citty";

/** `parley routes`: the file's routes, seen from a request (`explain` loads only its own code). */
export default defineCommand({
  meta: { name: "routes", description: "How parley.toml's [[routes]] route a request (see parley routes explain)" },
  subCommands: {
    explain: () => import("./routes-explain.ts").then((m) => m.default),
  },
});
