import type { AuditEntry, Issued, KeyChanges, KeyFields, KeyRecord } from "./types.ts";

type MaybePromise<T> = T | Promise<T>;

/** A key as the hot path needs it: its record and the SHA-256 (hex) of its current secret. */
export interface StoredKey {
  hash: string;
  record: KeyRecord;
}

/** An old secret's hash after a rotation: accepted until `until` (Unix ms), then answered as rotated. */
export interface RetiredHash {
  hash: string;
  keyId: string;
  until: number;
}

/** Every key the lookup must know, revoked ones included (so a 401 can say why). */
export interface KeySnapshot {
  keys: StoredKey[];
  retired: RetiredHash[];
}

/**
 * Where keys live: SQLite under PARLEY_DATA_DIR today (sqlite-store.ts), Postgres when DATABASE_URL
 * is set (issue 48). Callers await every method but `changes`, so an implementation may be async.
 * Errors a client should see are GatewayErrors: 404 for an unknown key, 422 naming the field.
 */
export interface KeyStore {
  /** A new key and its secret, shown this once. `actor` is the label of the admin key that asked. */
  create(fields: KeyFields, actor: string): MaybePromise<Issued>;
  list(): MaybePromise<KeyRecord[]>;
  /** By id, or by name (the live key of that name). */
  find(idOrName: string): MaybePromise<KeyRecord | undefined>;
  update(id: string, changes: KeyChanges, actor: string): MaybePromise<KeyRecord>;
  /** Revokes at once; revoking again changes nothing. */
  revoke(id: string, actor: string): MaybePromise<KeyRecord>;
  /** A new secret; the old one is accepted `graceS` seconds more (0: it stops at once). */
  rotate(id: string, graceS: number, actor: string): MaybePromise<Issued>;
  /** Adds an admin change of something else (an upstream, a reload) to the audit log. */
  addAudit(actor: string, action: string, target: string | null, detail: Record<string, unknown>): MaybePromise<void>;
  /** Newest first; `before` an entry id, for the next page. */
  audit(options?: { limit?: number; before?: number }): MaybePromise<AuditEntry[]>;
  /**
   * The hot path's question, answered synchronously and cheaply: every key, when they changed since
   * the last call (on any worker or gateway sharing the store), else undefined. The first call
   * always answers. An async store refreshes in the background and answers from what it last read.
   * One consumer per store instance (the lookup): a snapshot is handed out once.
   */
  changes(): KeySnapshot | undefined;
  /** When keys were last used (Unix ms by id), written in batches; not a change of the keys. */
  touch(used: ReadonlyMap<string, number>): MaybePromise<void>;
  close(): void;
}

/** An implementation that answers at once (SQLite): the same methods, without promises. */
export type Sync<T> = { [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Awaited<R> : T[K] };
