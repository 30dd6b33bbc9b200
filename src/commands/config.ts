import { defineCommand } from "citty";
import { configFileLocation, loadConfig, mask, setConfigValue } from "../config.ts";
import { exitOnConfigError } from "./fail.ts";

const show = defineCommand({
  meta: { name: "show", description: "Print the effective configuration with where each value comes from (secrets masked)" },
  run: () =>
    exitOnConfigError(() => {
      const { entries, configFile } = loadConfig();
      const width = Math.max(...entries.map((e) => e.key.length));
      const lines = entries.map(({ key, value, source, secret }) => {
        const shown = value === undefined ? "(unset)" : secret ? mask(value) : value;
        return `${key.padEnd(width)}  ${shown}${value === undefined ? "" : `  [${source}]`}`;
      });
      process.stdout.write(`# config file: ${configFile}\n${lines.join("\n")}\n`);
    }),
});

const set = defineCommand({
  meta: { name: "set", description: "Write a setting into the user config file: parley config set KEY VALUE, or interactively with no arguments" },
  args: {
    key: { type: "positional", required: false, description: "setting name, e.g. ALPHA_API_KEY" },
    value: { type: "positional", required: false, description: "its value" },
  },
  run: ({ args }) =>
    exitOnConfigError(async () => {
      const configFile = configFileLocation();
      if (!args.key) {
        const { promptConfig } = await import("./config-prompt.ts");
        return promptConfig(configFile);
      }
      if (args.value === undefined) {
        process.stderr.write("usage: parley config set KEY VALUE (or no arguments for the interactive prompt)\n");
        process.exit(2);
      }
      setConfigValue(configFile, args.key, args.value);
      process.stdout.write(`${args.key} saved to ${configFile}\n`);
    }),
});

export default defineCommand({
  meta: { name: "config", description: "Show or change parley's configuration" },
  subCommands: { show, set },
});
