import type { SQL } from "bun";
import { notFound, validationError } from "../errors.ts";
import { migrateKeys } from "./postgres-schema.ts";
import { hashSecret, newKeyId, newSecret, PREFIX_LENGTH } from "./secret.ts";
import { auditEntryOf, publicFields, recordOf, RETIRED_KEPT_MS, settingsOf, fieldsOf, type AuditRow, type Row, type SqliteKeyStoreOptions } from "./sqlite-store.ts";
import type { KeySnapshot, KeyStore } from "./store.ts";
import type { Issued, KeyFields } from "./types.ts";

/**
 * How often a gateway asks whether any key changed: a one-row read. Half a second, so that a change
 * made on another gateway is in force here within a second (contract 19) even when a read is slow.
 */
export const KEYS_REFRESH_MS = 500;

type Tx = SQL;

/** Postgres hands BIGINT back as text: the row with its numbers as numbers. */
const rowOf = (row: Record<string, unknown>): Row => ({
  ...(row as unknown as Row),
  expires_at: row.expires_at === null ? null : Number(row.expires_at),
  disabled: Number(row.disabled),
  revoked_at: row.revoked_at === null ? null : Number(row.revoked_at),
  created_at: Number(row.created_at),
  last_used_at: row.last_used_at === null ? null : Number(row.last_used_at),
});

/**
 * Keys in Postgres (DATABASE_URL), shared by every gateway that names it. The hot path never
 * waits for the database: `changes()` hands out the snapshot the background refresh last read
 * (every KEYS_REFRESH_MS, when `key_changes.version` moved), and a change made through this store
 * is read back before its call returns, so it is in force for this process's next request. With
 * the database down the last snapshot stays in force; the failed read is thrown once to the
 * lookup, which logs it.
 */
export function createPostgresKeyStore(sql: SQL, options: SqliteKeyStoreOptions = {}): KeyStore & { loaded: () => Promise<void> } {
  let pending: KeySnapshot | undefined;
  let failure: unknown;
  let seenVersion = -1;
  let timer: Timer | undefined;
  let refreshing: Promise<void> | undefined;
  let first: Promise<void> | undefined;

  async function read(): Promise<void> {
    await migrateKeys(sql);
    const [{ version }] = await sql`SELECT version::float8 AS version FROM key_changes WHERE one = 1`;
    if (version === seenVersion) return;
    // One repeatable-read transaction: the keys and the retired hashes of the same commit.
    const snapshot = await sql.begin("ISOLATION LEVEL REPEATABLE READ", async (tx) => ({
      version: Number((await tx`SELECT version FROM key_changes WHERE one = 1`)[0].version),
      keys: (await tx`SELECT * FROM keys`).map((row: Record<string, unknown>) => {
        const r = rowOf(row);
        return { hash: r.hash, record: recordOf(r) };
      }),
      retired: (await tx`SELECT * FROM key_retired_hashes`).map((row: { hash: string; key_id: string; until: string }) => ({
        hash: row.hash, keyId: row.key_id, until: Number(row.until),
      })),
    }));
    seenVersion = snapshot.version;
    pending = { keys: snapshot.keys, retired: snapshot.retired };
  }

  /** Reads the keys if they changed; one read at a time. */
  function refresh(): Promise<void> {
    refreshing ??= read().then(
      () => void (failure = undefined),
      (error) => void (failure = error),
    ).finally(() => (refreshing = undefined));
    return refreshing;
  }

  function start() {
    if (timer) return;
    first = refresh();
    timer = setInterval(() => void refresh(), KEYS_REFRESH_MS);
    timer.unref();
  }

  /** A change: in one transaction, with the version bumped and the audit entry; read back before it returns. */
  async function change<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    await migrateKeys(sql);
    const result = await sql.begin(async (tx) => {
      const value = await work(tx as unknown as Tx);
      await tx`UPDATE key_changes SET version = version + 1 WHERE one = 1`;
      return value;
    });
    await refresh();
    return result as T;
  }

  const audit = (tx: Tx, actor: string, action: string, target: string | null, detail: Record<string, unknown>) =>
    tx`INSERT INTO audit_log (time, actor, action, target, detail) VALUES (${Date.now()}, ${actor}, ${action}, ${target}, ${JSON.stringify(detail)})`;

  async function byId(tx: Tx, id: string): Promise<Row | undefined> {
    const [row] = await tx`SELECT * FROM keys WHERE id = ${id}`;
    return row && rowOf(row);
  }
  async function liveByName(tx: Tx, name: string): Promise<Row | undefined> {
    const [row] = await tx`SELECT * FROM keys WHERE name = ${name} AND revoked_at IS NULL`;
    return row && rowOf(row);
  }
  async function mustFind(tx: Tx, id: string): Promise<Row> {
    const row = await byId(tx, id);
    if (!row) throw notFound(`No key with id '${id}'.`);
    return row;
  }
  async function live(tx: Tx, id: string): Promise<Row> {
    const row = await mustFind(tx, id);
    if (row.revoked_at !== null) throw notFound(`Key '${row.name}' (${id}) is revoked; create a new one.`);
    return row;
  }
  async function checkName(tx: Tx, name: string, self?: string) {
    const where = options.reservedNames?.get(name);
    if (where) throw validationError("name", `'${name}' is the name of a key set in ${where}`);
    const other = await liveByName(tx, name);
    if (other && other.id !== self) throw validationError("name", `'${name}' is already the name of key ${other.id}`);
  }

  return {
    /** Resolves once the first snapshot is read (or failed): a server awaits it before taking requests. */
    loaded: async () => {
      start();
      await first;
    },

    async create(fields, actor) {
      const secret = newSecret();
      const id = newKeyId();
      const row = await change(async (tx) => {
        // Names are checked under a lock on the name, so two gateways cannot give one name twice.
        await tx`SELECT pg_advisory_xact_lock(hashtext(${`key-name:${fields.name}`}))`;
        await checkName(tx, fields.name);
        await tx`INSERT INTO keys (id, name, hash, prefix, settings, expires_at, disabled, created_at) VALUES (${id}, ${fields.name},
          ${hashSecret(secret)}, ${secret.slice(0, PREFIX_LENGTH)}, ${settingsOf(fields)}, ${fields.expires_at}, ${fields.disabled ? 1 : 0}, ${Date.now()})`;
        await audit(tx, actor, "key.create", id, { name: fields.name, fields: publicFields(fields) });
        return mustFind(tx, id);
      });
      return { ...recordOf(row), key: secret };
    },

    async list() {
      await migrateKeys(sql);
      return (await sql`SELECT * FROM keys ORDER BY created_at, id`).map((row: Record<string, unknown>) => recordOf(rowOf(row)));
    },

    async find(idOrName) {
      await migrateKeys(sql);
      const row = (await byId(sql, idOrName)) ?? (await liveByName(sql, idOrName));
      return row ? recordOf(row) : undefined;
    },

    async update(id, changes, actor) {
      return recordOf(await change(async (tx) => {
        const row = await live(tx, id);
        if (changes.name !== undefined && changes.name !== row.name) {
          await tx`SELECT pg_advisory_xact_lock(hashtext(${`key-name:${changes.name}`}))`;
          await checkName(tx, changes.name, id);
        }
        const fields: KeyFields = { ...fieldsOf(row), ...changes };
        await tx`UPDATE keys SET name = ${fields.name}, settings = ${settingsOf(fields)}, expires_at = ${fields.expires_at},
          disabled = ${fields.disabled ? 1 : 0} WHERE id = ${id}`;
        await audit(tx, actor, "key.update", id, { name: row.name, changes: publicFields(changes) });
        return mustFind(tx, id);
      }));
    },

    async revoke(id, actor) {
      return recordOf(await change(async (tx) => {
        const row = await mustFind(tx, id);
        if (row.revoked_at !== null) return row;
        await tx`UPDATE keys SET revoked_at = ${Date.now()} WHERE id = ${id}`;
        await audit(tx, actor, "key.revoke", id, { name: row.name });
        return mustFind(tx, id);
      }));
    },

    async rotate(id, graceS, actor) {
      if (!(Number.isSafeInteger(graceS) && graceS >= 0)) throw validationError("grace_s", "whole seconds, 0 or more");
      const secret = newSecret();
      const row = await change(async (tx) => {
        const old = await live(tx, id);
        const now = Date.now();
        await tx`INSERT INTO key_retired_hashes (hash, key_id, until) VALUES (${old.hash}, ${id}, ${now + graceS * 1000})
          ON CONFLICT (hash) DO UPDATE SET key_id = excluded.key_id, until = excluded.until`;
        await tx`DELETE FROM key_retired_hashes WHERE until < ${now - RETIRED_KEPT_MS}`;
        await tx`UPDATE keys SET hash = ${hashSecret(secret)}, prefix = ${secret.slice(0, PREFIX_LENGTH)} WHERE id = ${id}`;
        await audit(tx, actor, "key.rotate", id, { name: old.name, grace_s: graceS });
        return mustFind(tx, id);
      });
      return { ...recordOf(row), key: secret } satisfies Issued;
    },

    async addAudit(actor, action, target, detail) {
      await migrateKeys(sql);
      await audit(sql, actor, action, target, detail);
    },

    async audit({ limit = 100, before = Number.MAX_SAFE_INTEGER } = {}) {
      if (!(Number.isSafeInteger(limit) && limit >= 1 && limit <= 1000)) throw validationError("limit", "1 to 1000");
      await migrateKeys(sql);
      const rows = await sql`SELECT * FROM audit_log WHERE id < ${before} ORDER BY id DESC LIMIT ${limit}`;
      return rows.map((row: Record<string, unknown>) => auditEntryOf({ ...(row as unknown as AuditRow), id: Number(row.id), time: Number(row.time) }));
    },

    changes(): KeySnapshot | undefined {
      start();
      if (failure !== undefined) {
        const error = failure;
        failure = undefined;
        throw error;
      }
      const snapshot = pending;
      pending = undefined;
      return snapshot;
    },

    async touch(used) {
      if (used.size === 0) return;
      await migrateKeys(sql);
      const ids = [...used.keys()];
      await sql.unsafe(`UPDATE keys SET last_used_at = GREATEST(COALESCE(last_used_at, 0), u.at)
        FROM unnest($1::text[], $2::bigint[]) AS u(id, at) WHERE keys.id = u.id`, [ids, ids.map((id) => used.get(id)!)]);
    },

    close() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
