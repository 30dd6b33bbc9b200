import type { Database } from "bun:sqlite";
import type { FileMeta } from "./store.ts";

export type FileStatus = "uploaded" | "processed" | "error";

export interface FileRow extends FileMeta {
  status: FileStatus;
  statusDetails: string | null;
  text: string | null;
}

interface Row {
  id: string;
  filename: string;
  purpose: string;
  content_type: string;
  bytes: number;
  created_at: number;
  status: FileStatus;
  status_details: string | null;
  text: string | null;
}

const toFile = (r: Row): FileRow => ({
  id: r.id, filename: r.filename, purpose: r.purpose, contentType: r.content_type, bytes: r.bytes, createdAt: r.created_at,
  status: r.status, statusDetails: r.status_details, text: r.text,
});

/** The SQLite cache of file metadata and processed text; the store stays the source of truth. */
export function createFileCache(db: Database) {
  db.run(`CREATE TABLE IF NOT EXISTS files (
    id TEXT PRIMARY KEY, filename TEXT NOT NULL, purpose TEXT NOT NULL, content_type TEXT NOT NULL,
    bytes INTEGER NOT NULL, created_at INTEGER NOT NULL,
    status TEXT NOT NULL, status_details TEXT, text TEXT)`);
  db.run("CREATE INDEX IF NOT EXISTS files_newest ON files (created_at DESC, id DESC)");

  const insert = db.query(`INSERT OR IGNORE INTO files (id, filename, purpose, content_type, bytes, created_at, status)
    VALUES ($id, $filename, $purpose, $contentType, $bytes, $createdAt, 'uploaded')`);
  const byId = db.query<Row, { id: string }>("SELECT * FROM files WHERE id = $id");
  const page = db.query<Row, { purpose: string | null; after: string | null; limit: number }>(`
    SELECT * FROM files
    WHERE ($purpose IS NULL OR purpose = $purpose)
      AND ($after IS NULL OR (created_at, id) < (SELECT created_at, id FROM files WHERE id = $after))
    ORDER BY created_at DESC, id DESC LIMIT $limit`);
  const ids = db.query<{ id: string }, []>("SELECT id FROM files");
  const setResult = db.query("UPDATE files SET status = $status, status_details = $details, text = $text WHERE id = $id");
  const remove = db.query("DELETE FROM files WHERE id = $id");

  return {
    add(meta: FileMeta) {
      insert.run({ id: meta.id, filename: meta.filename, purpose: meta.purpose, contentType: meta.contentType, bytes: meta.bytes, createdAt: meta.createdAt });
    },
    get: (id: string) => {
      const row = byId.get({ id });
      return row ? toFile(row) : undefined;
    },
    page: (options: { purpose?: string; after?: string; limit: number }) =>
      page.all({ purpose: options.purpose ?? null, after: options.after ?? null, limit: options.limit }).map(toFile),
    ids: () => new Set(ids.all().map((r) => r.id)),
    processed(id: string, text: string) {
      setResult.run({ id, status: "processed", details: null, text });
    },
    failed(id: string, details: string) {
      setResult.run({ id, status: "error", details, text: null });
    },
    remove(id: string) {
      remove.run({ id });
    },
  };
}

export type FileCache = ReturnType<typeof createFileCache>;
