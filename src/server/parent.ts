/** How often the parent is looked at: its death is seen within this. */
const EVERY_MS = 500;
/** What in-flight requests get once the parent is gone: the app that started parley, and most likely its clients, went with it. */
export const ORPHAN_GRACE_MS = 1000;

/**
 * Calls `gone` once the process that started this one has exited, however it died (SIGKILL too):
 * the kernel hands an orphan to init or a subreaper, so its parent pid changes. One getppid a
 * 500 ms on Linux and macOS alike, whatever the parent did with stdin (stdin's EOF needs a pipe
 * the parent holds and nobody else; PR_SET_PDEATHSIG is Linux-only and out of Bun's reach).
 */
export function watchParent(gone: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    gone();
  }, EVERY_MS);
  timer.unref();
}
