import { existsSync, watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import { ConfigError, type Loaded } from "../config.ts";
import type { Logger } from "../log.ts";
import type { App } from "./app.ts";

/** Edits come as several writes (or a rename, from editors): one reload for a burst. */
const SETTLE_MS = 150;

/**
 * Contract 13: the upstreams file is watched, and SIGHUP reloads it. A valid change applies to
 * requests that start after it and one log line says what changed; an invalid one is refused with
 * its FILE:LINE line, and the running configuration stays. The directory is watched, not the file:
 * an editor that saves by renaming replaces the file a watch would hold.
 */
export function reloadUpstreams({ file, load, app, log, worker }: { file: string | undefined; load: () => Loaded; app: App; log: Logger; worker?: boolean }): () => void {
  let timer: Timer | undefined;
  /** What changed, or why nothing did. */
  const apply = (why: string): { ok: boolean; message: string } => {
    try {
      // A file that is gone (mid-save, or deleted) is no configuration to apply.
      if (file && !existsSync(file)) throw new ConfigError(`${file} is gone`);
      const { config } = load();
      const changed = app.reload(config);
      log.info(`upstreams reloaded (${why}): ${changed}`);
      return { ok: true, message: changed };
    } catch (error) {
      const why2 = error instanceof ConfigError ? error.message : `${file ?? "the configuration"} could not be read: ${(error as Error).message}`;
      log.error(`upstreams not reloaded (${why}), the running configuration stays: ${why2}`);
      return { ok: false, message: why2 };
    }
  };
  // POST /admin/v1/reload: this worker at once (to say what changed), then every worker through the supervisor's SIGHUP.
  app.onReload(() => {
    const done = apply("admin API");
    if (worker && done.ok) process.kill(process.ppid, "SIGHUP");
    return done;
  }, () => load().entries);
  const later = (why: string) => {
    clearTimeout(timer);
    timer = setTimeout(() => apply(why), SETTLE_MS);
  };
  const hangup = () => apply("SIGHUP");
  process.on("SIGHUP", hangup);
  let watcher: FSWatcher | undefined;
  if (file) {
    const name = basename(file);
    watcher = watch(dirname(file), (_event, changed) => {
      if (changed === name) later(`${name} changed`);
    });
    watcher.unref();
  }
  return () => {
    clearTimeout(timer);
    watcher?.close();
    process.off("SIGHUP", hangup);
  };
}
