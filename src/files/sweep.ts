import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";

/** An upload's bytes while they arrive: `<id>.<pid of the writer>.part` (an older parley wrote `<id>.part`). */
export const stagedName = (id: string) => `${id}.${process.pid}.part`;
const STAGED = /^file-[A-Za-z0-9]{24}(?:\.(\d+))?\.part$/;

/** The local store's sweep as a server (or a supervisor, before its workers) starts. */
export function sweepAtStart(config: Config, log: Logger): void {
  if (config.files.bucket) return;
  const swept = sweepStaged(join(config.dataDir, "files"));
  if (swept) log.info(`removed ${swept} unfinished upload(s) left by a server that was killed`);
}

/**
 * Removes the staged uploads of processes that are gone (a SIGKILL mid-upload leaves one). Runs once
 * as a server starts, before it takes uploads. The directory may be shared by other workers and
 * gateways on this machine, and an upload can sit quiet for as long as its client likes, so age
 * proves nothing: a part is left alone while the process named in it lives. Ours is stale by
 * definition (this process has not staged anything yet: a reused pid, as PID 1 in a container).
 * A part without a pid (an older parley's) goes when it is older than this process.
 */
export function sweepStaged(dir: string): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0; // no store yet
  }
  let swept = 0;
  for (const name of names) {
    const match = STAGED.exec(name);
    if (!match) continue;
    const path = join(dir, name);
    if (!stale(match[1] === undefined ? undefined : Number(match[1]), path)) continue;
    rmSync(path, { force: true });
    swept++;
  }
  return swept;
}

function stale(pid: number | undefined, path: string): boolean {
  if (pid === undefined) return (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Infinity) < performance.timeOrigin;
  return pid === process.pid || !alive(pid);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // someone else's process
  }
}
