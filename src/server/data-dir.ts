import { chmodSync, statSync } from "node:fs";
import type { Logger } from "../log.ts";

/**
 * PARLEY_DATA_DIR holds the database and uploads: an existing one that others may read is
 * tightened to 0700 as a server starts, with a log line (contract 25). A new one is made 0700.
 */
export function tightenDataDir(dir: string, log: Logger): void {
  let mode: number;
  try {
    mode = statSync(dir).mode & 0o777;
  } catch {
    return; // not made yet: it will be made 0700
  }
  if ((mode & 0o077) === 0) return;
  try {
    chmodSync(dir, 0o700);
    log.info(`tightened ${dir} from ${mode.toString(8).padStart(4, "0")} to 0700: it holds the database and uploads`);
  } catch (error) {
    log.warn(`${dir} is readable by others (${mode.toString(8).padStart(4, "0")}) and could not be tightened: ${(error as Error).message}`);
  }
}
