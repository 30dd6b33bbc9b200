/** The user config file (config.env) that `parley config set` writes, and the dotenv files parley reads. */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseDotenv } from "dotenv";
import { SETTINGS, settingNamed } from "./settings.ts";
import { ConfigError, mask } from "./values.ts";

/** Writes one variable into the user config file, keeping the others. */
export function setConfigValue(configFile: string, key: string, value: string): void {
  const setting = settingNamed(key);
  if (!setting) throw new ConfigError(`${key} is not a parley setting; known: ${SETTINGS.map((s) => s.key).join(", ")}`);
  if (key === "PARLEY_CONFIG_DIR") throw new ConfigError("PARLEY_CONFIG_DIR cannot live inside the config file; set it in the environment");
  const allowed = setting.check?.(value);
  if (allowed) throw new ConfigError(`${key}=${setting.secret ? mask(value) : JSON.stringify(value)} is invalid: expected ${allowed}`);
  writeConfigFile(configFile, { ...readEnvFile(configFile), [key]: value });
}

/** Removes a setting from the user config file; false when the file did not set it. */
export function unsetConfigValue(configFile: string, key: string): boolean {
  const values = readEnvFile(configFile);
  if (!Object.hasOwn(values, key)) return false;
  delete values[key];
  writeConfigFile(configFile, values);
  return true;
}

function writeConfigFile(configFile: string, values: Record<string, string>): void {
  mkdirSync(join(configFile, ".."), { recursive: true, mode: 0o700 });
  const text = Object.entries(values).map(([k, v]) => `${k}=${quote(k, v)}\n`).join("");
  writeFileSync(configFile, text, { mode: 0o600 });
}

/** What is wrong with a value for a setting, or undefined when it is fine. */
export function checkValue(key: string, value: string): string | undefined {
  const setting = settingNamed(key);
  if (!setting) return `${key} is not a parley setting`;
  const allowed = setting.check?.(value);
  return allowed ? `expected ${allowed}` : undefined;
}

/** The user config file's own values, unvalidated: what `config set` edits. */
export function readConfigFile(configFile: string): Record<string, string> {
  return readEnvFile(configFile);
}

/** A dotenv file's values; none when there is no file. */
export function readEnvFile(path: string): Record<string, string> {
  return existsSync(path) ? parseDotenv(readFileSync(path)) : {};
}

/** dotenv takes quoted text literally, with no escapes: pick a quote the value does not contain. */
function quote(key: string, value: string): string {
  const q = ["'", '"', "`"].find((q) => !value.includes(q));
  if (!q) throw new ConfigError(`${key} cannot hold all three quote characters (' " \`) in a config file`);
  return q + value + q;
}

