import busboy from "busboy";
import { Readable } from "node:stream";
import type { Config } from "../config.ts";
import { GatewayError, invalidRequest, notFound, unavailable, validationError } from "../errors.ts";
import type { ChatRequest } from "../ir.ts";
import type { Logger } from "../log.ts";
import type { FileCache, FileRow } from "./cache.ts";
import { attach, type Attachment } from "./context.ts";
import { cut, extractText, FILE_TYPES, resolveType } from "./extract.ts";
import { byteLimit } from "./limit.ts";
import { FILE_ID, type FileMeta, type FileStore, type NewFile } from "./store.ts";

const PURPOSES = ["assistants", "batch", "fine-tune", "vision", "user_data", "evals"];
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** `file-` and 24 characters from a secure random source, without modulo bias. */
function newFileId(): string {
  let id = "file-";
  while (id.length < 29) {
    for (const byte of crypto.getRandomValues(new Uint8Array(32))) {
      if (byte < 248 && id.length < 29) id += ALPHABET[byte % 62];
    }
  }
  return id;
}

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

export function createFiles({ config, store, cache, log }: { config: Config; store: FileStore; cache: FileCache; log: Logger }) {
  const processing = new Map<string, Promise<void>>();
  const maxChars = config.files.contextMaxChars;
  // Enough bytes for the characters a chat can take, with room for markup that extraction drops.
  const readLimit = Math.max(maxChars * 8, 1024 * 1024);

  function process(id: string): Promise<void> {
    const running = processing.get(id);
    if (running) return running;
    const job = (async () => {
      const file = cache.get(id);
      if (!file) return;
      try {
        const bytes = await store.read(id, readLimit);
        cache.processed(id, cut(extractText(bytes, file.contentType, bytes.length >= file.bytes), maxChars));
      } catch (error) {
        log.warn(`processing ${id} failed:`, error);
        cache.failed(id, `Processing failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    })().finally(() => processing.delete(id));
    processing.set(id, job);
    return job;
  }

  function remember(meta: FileMeta): FileRow {
    cache.add(meta);
    const row = cache.get(meta.id)!;
    if (row.status === "uploaded") void process(meta.id);
    return row;
  }

  /** The cache row, or what the store knows when another gateway wrote the file. */
  async function find(id: string): Promise<FileRow | undefined> {
    if (!FILE_ID.test(id)) return undefined;
    const cached = cache.get(id);
    if (cached) return cached;
    const meta = await store.head(id);
    return meta ? remember(meta) : undefined;
  }

  /** Makes the cache agree with the store: files added or removed elsewhere show up here. */
  async function sync(): Promise<void> {
    const stored = await store.list();
    const known = cache.ids();
    for (const meta of stored) if (!known.has(meta.id)) remember(meta);
    const present = new Set(stored.map((m) => m.id));
    for (const id of known) if (!present.has(id)) cache.remove(id);
  }

  /** Not found; a cached row for it was left by a delete on another gateway and goes too. */
  function gone(id: string): GatewayError {
    if (FILE_ID.test(id)) cache.remove(id);
    return notFound(`No file with id '${id}'.`);
  }

  const ready = sync().catch((error) => log.warn("could not read the file store at start:", error));

  return {
    async upload(request: Request): Promise<FileObject> {
      await ready;
      const { file, purpose, bytes } = await receive(request, store, config.files.maxUploadBytes);
      const fail = async (error: GatewayError) => {
        await store.delete(file.id).catch(() => undefined);
        throw error;
      };
      if (purpose === undefined) return fail(invalidRequest("Missing required field 'purpose'.", "purpose: required"));
      if (!PURPOSES.includes(purpose)) return fail(validationError("purpose", `must be one of ${PURPOSES.join(", ")}`));
      if (bytes === 0) return fail(invalidRequest("The file is empty."));
      if (file.purpose === undefined) await store.setPurpose(file.id, purpose);
      const meta: FileMeta = { ...file, purpose, bytes };
      remember(meta);
      return toObject({ ...meta, status: "uploaded" });
    },

    async list(options: { purpose?: string; limit: number; after?: string }) {
      await ready;
      await sync();
      if (options.after && !cache.get(options.after)) throw invalidRequest(`Unknown cursor: no file '${options.after}'.`, "after: a file id from a previous page");
      const rows = cache.page({ ...options, limit: options.limit + 1 });
      const data = rows.slice(0, options.limit).map(toObject);
      return { object: "list", data, has_more: rows.length > options.limit, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
    },

    async get(id: string): Promise<FileObject> {
      const file = await find(id);
      // A cached row may outlive a delete on another gateway: the store decides.
      if (!file || !(await store.head(id))) throw gone(id);
      return toObject(file);
    },

    async content(id: string): Promise<{ file: FileRow; body: ReadableStream<Uint8Array> }> {
      const file = await find(id);
      const body = file && (await store.open(id));
      if (!file || !body) throw gone(id);
      return { file, body };
    },

    async delete(id: string) {
      const file = await find(id);
      if (!file || !(await store.delete(id))) throw gone(id);
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

interface Received {
  file: NewFile;
  purpose: string | undefined;
  bytes: number;
}

/** Streams the `file` part of a multipart upload straight into the store. */
function receive(request: Request, store: FileStore, maxBytes: number): Promise<Received> {
  const type = request.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("multipart/form-data") || !request.body) {
    throw invalidRequest("Upload with multipart/form-data: a 'file' part and a 'purpose' part.");
  }
  return new Promise<Received>((resolve, reject) => {
    const fields: Record<string, string> = {};
    let stored: Promise<{ file: NewFile; bytes: number }> | undefined;
    let refused: GatewayError | undefined;
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { "content-type": type }, defParamCharset: "utf8", limits: { files: 1, fields: 20, fieldSize: 64 * 1024 } });
    } catch {
      throw invalidRequest("The multipart body has no boundary.");
    }

    parser.on("field", (name, value) => (fields[name] = value));
    parser.on("file", (name, stream, info) => {
      if (name !== "file" || stored || refused) return void stream.resume();
      const filename = info.filename || "upload";
      const contentType = resolveType(info.mimeType, filename);
      if (!contentType) {
        refused = invalidRequest(`Unsupported file type '${info.mimeType}' for '${filename}'.`, `accepted: ${FILE_TYPES.join(", ")} (or .txt .csv .json .html .htm .xml .md .markdown)`);
        return void stream.resume();
      }
      const file: NewFile = { id: newFileId(), filename, contentType, createdAt: Math.floor(Date.now() / 1000), purpose: PURPOSES.includes(fields.purpose ?? "") ? fields.purpose : undefined };
      const limit = byteLimit(maxBytes);
      limit.stream.on("error", () => stream.resume());
      stored = store.put(file, stream.pipe(limit.stream)).then(
        () => ({ file, bytes: limit.bytes() }),
        (error) => {
          if (error instanceof GatewayError) throw error;
          throw unavailable("The file store could not save the file; nothing was kept.", { upstream: error instanceof Error ? error.message : String(error) });
        },
      );
      stored.catch(() => stream.resume());
    });
    parser.on("error", () => reject(invalidRequest("The multipart body could not be parsed.")));
    parser.on("close", async () => {
      if (refused) return reject(refused);
      if (!stored) return reject(invalidRequest("Missing required field 'file'.", "file: required"));
      try {
        const { file, bytes } = await stored;
        resolve({ file, purpose: fields.purpose, bytes });
      } catch (error) {
        reject(error);
      }
    });
    Readable.fromWeb(request.body as never).on("error", (error) => parser.destroy(error)).pipe(parser);
  });
}
