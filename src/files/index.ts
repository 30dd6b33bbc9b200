import { join } from "node:path";
import type { Config } from "../config.ts";
import type { Database } from "bun:sqlite";
import type { Logger } from "../log.ts";
import { createFileCache } from "./cache.ts";
import { createLocalStore } from "./local.ts";
import { createFiles, type Files } from "./service.ts";
import type { FileStore } from "./store.ts";

/** S3 when OBJSTORE_FILES_BUCKET is set, else a directory under PARLEY_DATA_DIR. The S3 SDK loads only then. */
async function createFileStore(config: Config): Promise<FileStore> {
  if (!config.files.bucket) return createLocalStore(join(config.dataDir, "files"));
  const { createS3Store } = await import("./s3.ts");
  return createS3Store(config);
}

/** The store and the files service, opened on first use: a server that never touches files never loads them. */
export function lazyFiles(config: Config, log: Logger, db: () => Database) {
  let store: Promise<FileStore> | undefined;
  let files: Promise<Files> | undefined;
  const getStore = () => (store ??= createFileStore(config));
  const getFiles = () =>
    (files ??= getStore().then((s) => createFiles({ config, store: s, cache: createFileCache(db()), log })));
  return { store: getStore, files: getFiles };
}
