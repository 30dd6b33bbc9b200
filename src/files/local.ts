import { createWriteStream } from "node:fs";
import { access, constants, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { FILE_ID, type FileMeta, type FileStore, type NewFile } from "./store.ts";
import { stagedName } from "./sweep.ts";

/**
 * Files in a directory: `<id>` holds the bytes, `<id>.json` the metadata. Bytes stream into
 * `<id>.<pid>.part` and become a file by rename, after their metadata is written; a server sweeps
 * the parts of dead processes as it starts (sweep.ts).
 */
export function createLocalStore(dir: string): FileStore {
  const bytesPath = (id: string) => join(dir, id);
  const metaPath = (id: string) => join(dir, `${id}.json`);
  const stagedPath = (id: string) => join(dir, stagedName(id));
  // Uploads hold users' documents: readable by this user alone (contract 25).
  const ready = mkdir(dir, { recursive: true, mode: 0o700 });

  async function readMeta(id: string): Promise<FileMeta | undefined> {
    try {
      const [meta, info] = await Promise.all([readFile(metaPath(id), "utf8"), stat(bytesPath(id))]);
      const parsed = JSON.parse(meta) as Omit<FileMeta, "bytes">;
      return parsed.purpose ? { ...parsed, id, bytes: info.size } : undefined;
    } catch {
      return undefined;
    }
  }

  async function publish(file: NewFile, purpose: string) {
    try {
      await writeFile(metaPath(file.id), JSON.stringify({ ...file, purpose }), { mode: 0o600 });
      await rename(stagedPath(file.id), bytesPath(file.id));
    } catch (error) {
      await Promise.all([rm(stagedPath(file.id), { force: true }), rm(metaPath(file.id), { force: true })]);
      throw error;
    }
  }

  return {
    kind: "local",

    async put(file: NewFile, body: Readable) {
      await ready;
      try {
        await pipeline(body, createWriteStream(stagedPath(file.id), { flags: "wx", mode: 0o600 }));
      } catch (error) {
        await rm(stagedPath(file.id), { force: true });
        throw error;
      }
      if (file.purpose) await publish(file, file.purpose);
    },

    commit: publish,

    head: (id) => (FILE_ID.test(id) ? readMeta(id) : Promise.resolve(undefined)),

    async ids() {
      await ready;
      return (await readdir(dir)).filter((name) => FILE_ID.test(name));
    },

    async open(id) {
      if (!(await readMeta(id))) return undefined;
      return Bun.file(bytesPath(id)).stream();
    },

    async read(id, limit) {
      const handle = await open(bytesPath(id));
      try {
        const buffer = Buffer.alloc(Math.min(limit, (await handle.stat()).size));
        await handle.read(buffer, 0, buffer.length, 0);
        return buffer;
      } finally {
        await handle.close();
      }
    },

    async delete(id) {
      if (!FILE_ID.test(id)) return false;
      const existed = await stat(bytesPath(id)).then(() => true, () => false);
      await rm(bytesPath(id), { force: true });
      await rm(metaPath(id), { force: true });
      return existed;
    },

    async check() {
      try {
        await ready;
        await access(dir, constants.W_OK);
        return true;
      } catch {
        return false;
      }
    },
  };
}
