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
  /**
   * Streams the body in. With a purpose, the file becomes visible once the body ends; without one,
   * the bytes stay staged under a name no reader sees until `commit`. If the body or the store
   * fails, nothing is left behind.
   */
  put(file: NewFile, body: Readable): Promise<void>;
  /** Makes staged bytes a visible file with its purpose; if that fails, the staged bytes are removed. */
  commit(file: NewFile, purpose: string): Promise<void>;
  head(id: string): Promise<FileMeta | undefined>;
  /** The ids of the stored files, read cheaply (no metadata); staged uploads are not among them. */
  ids(): Promise<string[]>;
  open(id: string): Promise<ReadableStream<Uint8Array> | undefined>;
  /** At most `limit` bytes from the start. */
  read(id: string, limit: number): Promise<Uint8Array>;
  delete(id: string): Promise<boolean>;
  /** A cheap real call that proves the store is reachable with our credentials. */
  check(): Promise<boolean>;
}
