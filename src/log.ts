import { createConsola, type ConsolaInstance } from "consola";
import type { LogLevel } from "./config.ts";

export type Logger = ConsolaInstance;

const LEVELS: Record<LogLevel, number> = { silent: -999, error: 0, warn: 1, info: 3, debug: 4, trace: 5 };

/** Logs go to stderr so that stdout stays clean for `--version` and `config show`. */
export function createLogger(level: LogLevel): Logger {
  return createConsola({ level: LEVELS[level], stdout: process.stderr, stderr: process.stderr });
}
