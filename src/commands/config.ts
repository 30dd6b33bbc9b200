import { shownUrl } from "../providers/kind.ts";
import { defineCommand } from "citty";
import { credentialKind } from "../lib/aws.ts";
import { configFileLocation, loadConfig, mask, setConfigValue, SETTINGS, unsetConfigValue } from "../config.ts";
import { closest } from "../lib/did-you-mean.ts";
import { maskSecrets } from "../secrets.ts";
import { exitOnConfigError, exitUsage } from "./fail.ts";
import { RESTART_HINT } from "./restart-hint.ts";


const show = defineCommand({
  meta: { name: "show", description: "Print the effective configuration with where each value comes from (secrets masked)" },
  run: () =>
    exitOnConfigError(() => {
      const { config, entries: read, configFile } = loadConfig();
      // The directories' defaults are computed at start: show where they are, as `config get` does.
      const dirs: Record<string, string> = { PARLEY_DATA_DIR: config.dataDir, PARLEY_CONFIG_DIR: config.configDir };
      const entries = read.map((e) => (e.value === undefined && Object.hasOwn(dirs, e.key) ? { ...e, value: dirs[e.key] } : e));
      const width = Math.max(...entries.map((e) => e.key.length));
      const lines = entries.map(({ key, value, source, secret }) => {
        const shown = value === undefined ? "(unset)" : secret ? mask(value) : shownUrl(value);
        return `${key.padEnd(width)}  ${shown}${value === undefined ? "" : `  [${source}]`}`;
      });
      const bedrock = config.files.bucket ? `# S3 credentials: ${credentialKind(config.files.aws)}\n` : "";
      process.stdout.write(maskSecrets(`# config file: ${configFile}\n${bedrock}${lines.join("\n")}\n`));
    }),
});

const get = defineCommand({
  meta: { name: "get", description: "Print one setting's effective value, unmasked, for scripts: KEY=$(parley config get API_KEY)" },
  args: { key: { type: "positional", required: true, description: "setting name, e.g. API_KEY" } },
  run: ({ args }) =>
    exitOnConfigError(() => {
      const key = settingKey(args.key);
      const { config, entries } = loadConfig();
      const dirs: Record<string, string> = { PARLEY_DATA_DIR: config.dataDir, PARLEY_CONFIG_DIR: config.configDir };
      const value = Object.hasOwn(dirs, key) ? dirs[key] : entries.find((e) => e.key === key)?.value;
      if (value === undefined) {
        process.stderr.write(`parley: ${key} is not set\n`);
        process.exit(1);
      }
      process.stdout.write(`${value}\n`);
    }),
});

/** A setting's name from what the user typed: the name itself or one of its aliases (AWS_REGION). */
function settingKey(typed: string): string {
  const setting = SETTINGS.find((s) => s.key === typed || s.aliases?.includes(typed));
  if (setting) return setting.key;
  const suggestion = closest(typed, SETTINGS.map((s) => s.key));
  return exitUsage(`${typed} is not a parley setting${suggestion ? `; did you mean ${suggestion}?` : ""} (see parley config show)`);
}

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
        if (!process.stdin.isTTY) exitUsage("config set without arguments asks in a terminal; from a script: parley config set KEY VALUE");
        const { promptConfig } = await import("./config-prompt.ts");
        return promptConfig(configFile);
      }
      if (args.value === undefined) exitUsage("usage: parley config set KEY VALUE (or no arguments for the interactive prompt)");
      const key = settingKey(args.key);
      setConfigValue(configFile, key, args.value);
      process.stdout.write(`${key} saved to ${configFile}\n${RESTART_HINT}\n`);
      const shadow = shadowedBy(key);
      if (shadow) process.stderr.write(`parley: note: ${key} is also set in ${shadow}, which takes precedence over the config file\n`);
    }),
});

const unset = defineCommand({
  meta: { name: "unset", description: "Remove a setting from the user config file: parley config unset KEY" },
  args: { key: { type: "positional", required: true, description: "setting name, e.g. ALPHA_API_KEY" } },
  run: ({ args }) =>
    exitOnConfigError(() => {
      const configFile = configFileLocation();
      const key = settingKey(args.key);
      if (!unsetConfigValue(configFile, key)) process.stdout.write(`${key} was not set in ${configFile}\n`);
      else process.stdout.write(`${key} removed from ${configFile}\n${RESTART_HINT}\n`);
      const shadow = shadowedBy(key);
      if (shadow) process.stderr.write(`parley: note: ${key} is still set in ${shadow}\n`);
    }),
});

export default defineCommand({
  meta: { name: "config", description: "Show or change parley's configuration" },
  subCommands: { show, get, set, unset },
});

/** Where a higher-precedence value hides the config file's, if anywhere. */
function shadowedBy(key: string): string | undefined {
  try {
    const source = loadConfig().entries.find((e) => e.key === key)?.source;
    return source === "env" || source === ".env" ? (source === "env" ? "the environment" : "./.env") : undefined;
  } catch {
    return undefined; // another setting is invalid: `config show` or `serve` will say which
  }
}
