import { join } from "node:path";
import type { Config } from "../config.ts";
import type { Database } from "bun:sqlite";
import type { Logger } from "../log.ts";
import type { Files } from "./service.ts";
import type { FileStore } from "./store.ts";

/** S3 when OBJSTORE_FILES_BUCKET is set, else a directory under PARLEY_DATA_DIR. The S3 SDK loads only then. */
async function createFileStore(config: Config): Promise<FileStore> {
  if (!config.files.bucket) return (await import("./local.ts")).createLocalStore(join(config.dataDir, "files"));
  return (await import("./s3.ts")).createS3Store(config);
}

/** The store and the files service, loaded on first use: a server that never touches files never loads them. */
export function lazyFiles(config: Config, log: Logger, db: () => Database) {
  let store: Promise<FileStore> | undefined;
  let files: Promise<Files> | undefined;
  const getStore = () => (store ??= createFileStore(config));
  const getFiles = () =>
    (files ??= Promise.all([getStore(), import("./service.ts"), import("./cache.ts")]).then(([store, { createFiles }, { createFileCache }]) =>
      createFiles({ config, store, cache: createFileCache(db()), log }),
    ));
  return { store: getStore, files: getFiles };
}
