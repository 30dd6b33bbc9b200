import type { Readable } from "node:stream";

/** `file-` and 24 letters or digits: anything else never reaches a store, so it cannot name a path. */
export const FILE_ID = /^file-[A-Za-z0-9]{24}$/;

/** What travels with the bytes, so the store alone can rebuild everything else. */
export interface FileMeta {
  id: string;
  filename: string;
  purpose: string;
  contentType: string;
  /** Unix seconds. */
  createdAt: number;
  bytes: number;
}

export type NewFile = Omit<FileMeta, "bytes" | "purpose"> & { purpose?: string };

/** Where file bytes live: S3 when a bucket is configured, a local directory otherwise. */
export interface FileStore {
  readonly kind: "s3" | "local";
  /** Streams the body in; on any failure nothing is left behind. */
  put(file: NewFile, body: Readable): Promise<void>;
  /** Rewrites the metadata of a stored file (the purpose can arrive after the bytes). */
  setPurpose(id: string, purpose: string): Promise<void>;
  head(id: string): Promise<FileMeta | undefined>;
  /** Every complete file: those without a purpose are unfinished uploads and are left out. */
  list(): Promise<FileMeta[]>;
  open(id: string): Promise<ReadableStream<Uint8Array> | undefined>;
  /** At most `limit` bytes from the start. */
  read(id: string, limit: number): Promise<Uint8Array>;
  delete(id: string): Promise<boolean>;
  /** A cheap real call that proves the store is reachable with our credentials. */
  check(): Promise<boolean>;
}
