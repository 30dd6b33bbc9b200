import { readFileSync } from "node:fs";

/** What scripts and tests need to know about processes: a free port, and a process's memory and CPU from /proc. */

/** A port nothing listens on right now (Bun picks it; the probe is closed again at once). */
export function freePort(hostname = "127.0.0.1"): number {
  const probe = Bun.serve({ hostname, port: 0, fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

/** Resident memory of a process in MB (Linux, /proc/<pid>/status VmRSS); 0 once it has exited. */
export function rssMb(pid: number): number {
  const status = readOr(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

let ticksPerSecond: number | undefined;

/** CPU time a process has used so far, user + system, all its threads, in seconds (/proc/<pid>/stat). */
export function cpuSeconds(pid: number): number {
  const stat = readOr(`/proc/${pid}/stat`);
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11] ?? 0) + Number(fields[12] ?? 0); // utime, stime: fields 14 and 15
  ticksPerSecond ??= Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;
  return ticks / ticksPerSecond;
}

function readOr(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
