import { existsSync } from "node:fs";
import { defineCommand } from "citty";
import { loadConfig } from "../config.ts";
import { exitOnConfigError, exitUsage } from "./fail.ts";

/**
 * Reads the upstreams file as `serve` would, with every other setting around it (MODEL_ROUTES naming
 * an upstream, a `${VAR}` from ./.env): exit 0 with one line, or 2 with the `FILE:LINE: what is wrong` line.
 */
export default defineCommand({
  meta: { name: "check", description: "Check an upstreams file (default: the one serve would read) and the settings around it; exit 2 with FILE:LINE on a mistake" },
  args: {
    file: { type: "positional", required: false, description: "the file (default: PARLEY_UPSTREAMS, else ./parley.toml, else parley.toml in PARLEY_CONFIG_DIR)" },
  },
  run: ({ args }) =>
    exitOnConfigError(() => {
      if (args.file !== undefined && !existsSync(args.file)) exitUsage(`${args.file}: no such file`);
      const { config, upstreamsFile } = loadConfig(args.file === undefined ? {} : { flags: { PARLEY_UPSTREAMS: args.file } });
      const { upstreams, routes } = config.upstreams;
      if (!upstreamsFile) {
        const names = upstreams.map((u) => u.name).join(", ");
        return void process.stdout.write(`no upstreams file (PARLEY_UPSTREAMS is unset; no ./parley.toml, no ${config.configDir}/parley.toml); the settings are valid: ${upstreams.length} upstreams (${names})\n`);
      }
      const declared = upstreams.filter((u) => u.origin.file);
      const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
      process.stdout.write(`${upstreamsFile}: ok, ${plural(declared.length, "upstream")}${declared.length ? ` (${declared.map((u) => u.name).join(", ")})` : ""}, ${plural(routes.length, "route")}\n`);
    }),
});
