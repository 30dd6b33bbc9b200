import { defineCommand } from "citty";
import { configFileLocation, trustFolder } from "../config.ts";
import { dirname } from "node:path";
import { exitOnConfigError } from "./fail.ts";

/**
 * `parley trust`: lets parley read the working directory's `.env` and `parley.toml`, as they are
 * now (their SHA-256 is recorded; a change needs trusting again), as `mise trust` does it.
 */
export default defineCommand({
  meta: { name: "trust", description: "Let parley read this folder's .env and parley.toml as they are now (recorded by SHA-256: a changed file needs trusting again)" },
  run: () =>
    exitOnConfigError(() => {
      const cwd = process.cwd();
      // The config dir the environment names, never one the folder's own .env would.
      const configDir = dirname(configFileLocation({ flags: {}, env: { ...process.env, PARLEY_TRUST_CWD: "0" }, cwd }));
      const trusted = trustFolder(cwd, configDir);
      if (trusted.length === 0) return void process.stdout.write(`${cwd} has no .env or parley.toml: nothing to trust\n`);
      process.stdout.write(`trusted, as they are now: ${trusted.join(", ")}\n`);
    }),
});
