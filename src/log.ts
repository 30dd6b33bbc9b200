import { writeSync } from "node:fs";
import { formatWithOptions } from "node:util";
import { maskSecrets } from "./secrets.ts";
import { createConsola, type ConsolaInstance, type ConsolaReporter } from "consola";
export type Logger = ConsolaInstance;
export type LogLevel = "silent" | "error" | "warn" | "info" | "debug" | "trace";
export type LogFormat = "text" | "json";

const LEVELS: Record<LogLevel, number> = { silent: -999, error: 0, warn: 1, info: 3, debug: 4, trace: 5 };

/**
 * Logs go to stderr so that stdout stays clean for `--version`, `config show` and serve's ready line.
 * Icons and badges are for a terminal; a file or a pipe gets plain `[level] message` lines (consola
 * would choose its fancy reporter for those too, outside CI).
 */
export function createLogger(level: LogLevel, format: LogFormat = "text"): Logger {
  // `fancy` is read by consola's Node build; the types TypeScript resolves for it do not list it.
  const options = {
    level: LEVELS[level],
    stdout: masked,
    stderr: masked,
    fancy: process.stderr.isTTY === true,
    ...(format === "json" ? { reporters: [jsonReporter] } : {}),
  };
  return createConsola(options);
}

/** stderr, with every configured secret masked (contract 25): what consola's reporters write to. */
const masked = {
  write: (text: string) => process.stderr.write(maskSecrets(String(text))),
  get isTTY() {
    return process.stderr.isTTY;
  },
  get columns() {
    return process.stderr.columns;
  },
} as unknown as NodeJS.WriteStream;

/** One JSON object per line: time, level, tag, message, and an error's name, message and stack. */
const jsonReporter: ConsolaReporter = {
  log(entry) {
    const errors = entry.args.filter((arg): arg is Error => arg instanceof Error);
    const text = entry.args.filter((arg) => !(arg instanceof Error));
    const line: Record<string, unknown> = { time: entry.date.toISOString(), level: entry.type };
    if (entry.tag) line.tag = entry.tag;
    line.message = formatWithOptions({ colors: false, breakLength: Infinity }, ...text);
    if (errors[0]) line.error = { name: errors[0].name, message: errors[0].message, stack: errors[0].stack };
    writeLine(maskSecrets(JSON.stringify(line)));
  },
};

/** A line that must be seen whatever the log level (the generated key), in the log's format. */
export function announce(format: LogFormat, message: string): void {
  writeLine(format === "json" ? JSON.stringify({ time: new Date().toISOString(), level: "info", message }) : message);
}

function writeLine(text: string): void {
  try {
    writeSync(2, `${text}\n`);
  } catch {
    // stderr closed: nothing useful to do with a log line
  }
}

/** Characters of a client's id (a model) that a log line or usage row keeps. */
const KEPT = 200;

/** A client's id as logs and records keep it: a megabyte id is its start and its length, not a megabyte line. */
export function clip(id: string): string {
  return id.length > KEPT ? `${id.slice(0, KEPT)}…(${id.length} characters)` : id;
}
