import type { Config } from "../config.ts";
import { invalidRequest, notFound, unavailable } from "../errors.ts";
import type { ChatRequest } from "../ir.ts";
import type { Logger } from "../log.ts";
import type { FileCache, FileRow } from "./cache.ts";
import { attach, type Attachment } from "./context.ts";
import { limiter } from "../lib/concurrency.ts";
import { cut, extractText } from "./extract.ts";
import { FILE_ID, type FileMeta, type FileStore } from "./store.ts";
import { storeSync } from "./sync.ts";
import { receiveUpload } from "./upload.ts";

/** Files whose text is extracted at once; a sync that finds many new files queues the rest. */
const PROCESSING_AT_ONCE = 4;

export interface FileObject {
  id: string;
  object: "file";
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: string;
  status_details?: string;
}

const toObject = (file: FileMeta & { status: string; statusDetails?: string | null }): FileObject => ({
  id: file.id, object: "file", bytes: file.bytes, created_at: file.createdAt, filename: file.filename, purpose: file.purpose,
  status: file.status, ...(file.statusDetails ? { status_details: file.statusDetails } : {}),
});

export function createFiles({ config, store, cache, log, syncWindowMs }: { config: Config; store: FileStore; cache: FileCache; log: Logger; syncWindowMs?: number }) {
  const processing = new Map<string, Promise<void>>();
  const slot = limiter(PROCESSING_AT_ONCE);
  const maxChars = config.files.contextMaxChars;
  // Enough bytes for the characters a chat can take, with room for markup that extraction drops.
  const readLimit = Math.max(maxChars * 8, 1024 * 1024);

  function process(id: string): Promise<void> {
    const running = processing.get(id);
    if (running) return running;
    const job = slot(async () => {
      const file = cache.get(id);
      if (!file) return;
      try {
        const bytes = await store.read(id, readLimit);
        cache.processed(id, cut(extractText(bytes, file.contentType, bytes.length >= file.bytes), maxChars));
      } catch (error) {
        log.warn(`processing ${id} failed:`, error);
        cache.failed(id, `Processing failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }).finally(() => processing.delete(id));
    processing.set(id, job);
    return job;
  }

  function remember(meta: FileMeta): FileRow {
    cache.add(meta);
    const row = cache.get(meta.id)!;
    if (row.status === "uploaded") void process(meta.id);
    return row;
  }

  const fresh = storeSync({ store, cache, remember, windowMs: syncWindowMs });
  const synced = () =>
    fresh().catch((error) => {
      throw unavailable("The file store could not be listed.", { upstream: error instanceof Error ? error.message : String(error) });
    });

  /** The cache row (at most one sync window old), or what the store knows when another gateway wrote the file since. */
  async function find(id: string): Promise<FileRow | undefined> {
    if (!FILE_ID.test(id)) return undefined;
    await fresh().catch((error) => log.warn("could not list the file store:", error));
    const cached = cache.get(id);
    if (cached) return cached;
    const meta = await store.head(id);
    return meta ? remember(meta) : undefined;
  }

  const gone = (id: string) => {
    cache.remove(id);
    return notFound(`No file with id '${id}'.`);
  };

  return {
    async upload(request: Request): Promise<FileObject> {
      const meta = await receiveUpload(request, store, config.files.maxUploadBytes);
      remember(meta);
      return toObject({ ...meta, status: "uploaded" });
    },

    async list(options: { purpose?: string; limit: number; after?: string }) {
      await synced();
      if (options.after && !cache.get(options.after)) throw invalidRequest(`Unknown cursor: no file '${options.after}'.`, "after: a file id from a previous page");
      const rows = cache.page({ ...options, limit: options.limit + 1 });
      const data = rows.slice(0, options.limit).map(toObject);
      return { object: "list", data, has_more: rows.length > options.limit, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
    },

    async get(id: string): Promise<FileObject> {
      const file = await find(id);
      if (!file) throw notFound(`No file with id '${id}'.`);
      return toObject(file);
    },

    async content(id: string): Promise<{ file: FileRow; body: ReadableStream<Uint8Array> }> {
      const file = await find(id);
      if (!file) throw notFound(`No file with id '${id}'.`);
      const body = await store.open(id);
      if (!body) throw gone(id);
      return { file, body };
    },

    async delete(id: string) {
      const file = await find(id);
      if (!file) throw notFound(`No file with id '${id}'.`);
      if (!(await store.delete(id))) throw gone(id);
      cache.remove(id);
      return { id, object: "file", deleted: true };
    },

    /** Every id must exist; each file's processed text goes in front of the last user message. */
    async attachTo(request: ChatRequest): Promise<void> {
      const files = await Promise.all(request.fileIds.map(async (id) => ({ id, file: await find(id) })));
      const missing = files.find((f) => !f.file);
      if (missing) throw notFound(`No file with id '${missing.id}' (in file_ids).`);
      const attachments: Attachment[] = [];
      for (const { id } of files) {
        if (cache.get(id)!.status === "uploaded") await process(id);
        const row = cache.get(id)!;
        attachments.push({ meta: row, text: row.text ?? `[${row.statusDetails ?? "This file could not be processed."}]` });
      }
      attach(request, attachments);
    },
  };
}

export type Files = ReturnType<typeof createFiles>;
