import type { Database } from "bun:sqlite";
import { notFound, validationError } from "../errors.ts";
import { createKeyTables } from "./sqlite-schema.ts";
import { hashSecret, newKeyId, newSecret, PREFIX_LENGTH } from "./secret.ts";
import type { KeySnapshot, KeyStore, Sync } from "./store.ts";
import type { AuditEntry, Issued, KeyChanges, KeyFields, KeyRecord } from "./types.ts";

export interface Row {
  id: string;
  name: string;
  hash: string;
  prefix: string;
  settings: string;
  expires_at: number | null;
  disabled: number;
  revoked_at: number | null;
  created_at: number;
  last_used_at: number | null;
}

/** The restrictions kept as the `settings` JSON column. */
type Settings = Pick<KeyFields, "scopes" | "models" | "routes" | "upstreams" | "budget" | "rpm" | "tpm" | "metadata">;
const SETTINGS = ["scopes", "models", "routes", "upstreams", "budget", "rpm", "tpm", "metadata"] as const satisfies readonly (keyof Settings)[];

/** An old secret is answered "rotated" (not "unknown") for this long after it stopped. */
export const RETIRED_KEPT_MS = 30 * 86_400_000;

export interface SqliteKeyStoreOptions {
  /** Names env keys hold (API_KEY's `main`, API_KEYS' names and labels) -> where each is set: a runtime key cannot take one. */
  reservedNames?: ReadonlyMap<string, string>;
}

/**
 * Keys in parley's SQLite database. `open` is called twice, lazily: a connection for writes and
 * one for the lookup, whose `PRAGMA data_version` then moves with every commit of another
 * connection, this process's writer included, so a change on any worker is seen at the next request.
 */
export function createSqliteKeyStore(open: () => Database, options: SqliteKeyStoreOptions = {}): Sync<KeyStore> {
  let writer: ReturnType<typeof prepareWriter> | undefined;
  let reader: ReturnType<typeof prepareReader> | undefined;
  let seenDataVersion = -1;
  let seenVersion = -1;
  const w = () => (writer ??= prepareWriter(open()));

  function prepareWriter(db: Database) {
    createKeyTables(db);
    return {
      db,
      byId: db.query<Row, { id: string }>("SELECT * FROM keys WHERE id = $id"),
      liveByName: db.query<Row, { name: string }>("SELECT * FROM keys WHERE name = $name AND revoked_at IS NULL"),
      all: db.query<Row, []>("SELECT * FROM keys ORDER BY created_at, id"),
      insert: db.query(`INSERT INTO keys (id, name, hash, prefix, settings, expires_at, disabled, created_at)
        VALUES ($id, $name, $hash, $prefix, $settings, $expires_at, $disabled, $created_at)`),
      save: db.query(`UPDATE keys SET name = $name, settings = $settings, expires_at = $expires_at, disabled = $disabled WHERE id = $id`),
      rehash: db.query("UPDATE keys SET hash = $hash, prefix = $prefix WHERE id = $id"),
      retire: db.query("INSERT OR REPLACE INTO key_retired_hashes (hash, key_id, until) VALUES ($hash, $key_id, $until)"),
      pruneRetired: db.query("DELETE FROM key_retired_hashes WHERE until < $before"),
      revoke: db.query("UPDATE keys SET revoked_at = $now WHERE id = $id"),
      bump: db.query("UPDATE key_changes SET version = version + 1 WHERE one = 1"),
      touch: db.query("UPDATE keys SET last_used_at = max(coalesce(last_used_at, 0), $at) WHERE id = $id"),
      audit: db.query("INSERT INTO audit_log (time, actor, action, target, detail) VALUES ($time, $actor, $action, $target, $detail)"),
      auditPage: db.query<AuditRow, { before: number; limit: number }>("SELECT * FROM audit_log WHERE id < $before ORDER BY id DESC LIMIT $limit"),
    };
  }

  function prepareReader(db: Database) {
    w();
    const statements = {
      db,
      dataVersion: db.query<{ data_version: number }, []>("PRAGMA data_version"),
      version: db.query<{ version: number }, []>("SELECT version FROM key_changes WHERE one = 1"),
      keys: db.query<Row, []>("SELECT * FROM keys"),
      retired: db.query<{ hash: string; key_id: string; until: number }, []>("SELECT * FROM key_retired_hashes"),
    };
    // One read transaction: the keys and the retired hashes of the same commit.
    const snapshot = db.transaction((): KeySnapshot => ({
      keys: statements.keys.all().map((row) => ({ hash: row.hash, record: recordOf(row) })),
      retired: statements.retired.all().map((row) => ({ hash: row.hash, keyId: row.key_id, until: row.until })),
    }));
    return { ...statements, snapshot: () => snapshot() };
  }

  const immediate = <T>(work: () => T): T => w().db.transaction(work).immediate();

  function audit(actor: string, action: string, target: string | null, detail: Record<string, unknown>) {
    w().audit.run({ time: Date.now(), actor, action, target, detail: JSON.stringify(detail) });
  }

  function mustFind(id: string): Row {
    const row = w().byId.get({ id });
    if (!row) throw notFound(`No key with id '${id}'.`);
    return row;
  }

  function live(id: string): Row {
    const row = mustFind(id);
    if (row.revoked_at !== null) throw notFound(`Key '${row.name}' (${id}) is revoked; create a new one.`);
    return row;
  }

  function checkName(name: string, self?: string) {
    const where = options.reservedNames?.get(name);
    if (where) throw validationError("name", `'${name}' is the name of a key set in ${where}`);
    const other = w().liveByName.get({ name });
    if (other && other.id !== self) throw validationError("name", `'${name}' is already the name of key ${other.id}`);
  }

  return {
    create(fields, actor) {
      const secret = newSecret();
      const id = newKeyId();
      const row = immediate(() => {
        checkName(fields.name);
        w().insert.run({
          id, name: fields.name, hash: hashSecret(secret), prefix: secret.slice(0, PREFIX_LENGTH), settings: settingsOf(fields),
          expires_at: fields.expires_at, disabled: fields.disabled ? 1 : 0, created_at: Date.now(),
        });
        w().bump.run();
        audit(actor, "key.create", id, { name: fields.name, fields: publicFields(fields) });
        return mustFind(id);
      });
      return { ...recordOf(row), key: secret };
    },

    list: () => w().all.all().map(recordOf),

    find(idOrName) {
      const row = w().byId.get({ id: idOrName }) ?? w().liveByName.get({ name: idOrName });
      return row ? recordOf(row) : undefined;
    },

    update(id, changes, actor) {
      return recordOf(immediate(() => {
        const row = live(id);
        if (changes.name !== undefined && changes.name !== row.name) checkName(changes.name, id);
        const fields: KeyFields = { ...fieldsOf(row), ...changes };
        w().save.run({ id, name: fields.name, settings: settingsOf(fields), expires_at: fields.expires_at, disabled: fields.disabled ? 1 : 0 });
        w().bump.run();
        audit(actor, "key.update", id, { name: row.name, changes: publicFields(changes) });
        return mustFind(id);
      }));
    },

    revoke(id, actor) {
      return recordOf(immediate(() => {
        const row = mustFind(id);
        if (row.revoked_at !== null) return row;
        w().revoke.run({ id, now: Date.now() });
        w().bump.run();
        audit(actor, "key.revoke", id, { name: row.name });
        return mustFind(id);
      }));
    },

    rotate(id, graceS, actor) {
      if (!(Number.isSafeInteger(graceS) && graceS >= 0)) throw validationError("grace_s", "whole seconds, 0 or more");
      const secret = newSecret();
      const row = immediate(() => {
        const old = live(id);
        const now = Date.now();
        w().retire.run({ hash: old.hash, key_id: id, until: now + graceS * 1000 });
        w().pruneRetired.run({ before: now - RETIRED_KEPT_MS });
        w().rehash.run({ id, hash: hashSecret(secret), prefix: secret.slice(0, PREFIX_LENGTH) });
        w().bump.run();
        audit(actor, "key.rotate", id, { name: old.name, grace_s: graceS });
        return mustFind(id);
      });
      return { ...recordOf(row), key: secret } satisfies Issued;
    },

    addAudit: (actor, action, target, detail) => audit(actor, action, target, detail),

    audit({ limit = 100, before = Number.MAX_SAFE_INTEGER } = {}) {
      if (!(Number.isSafeInteger(limit) && limit >= 1 && limit <= 1000)) throw validationError("limit", "1 to 1000");
      return w().auditPage.all({ before, limit }).map(auditEntryOf);
    },

    changes(): KeySnapshot | undefined {
      const r = (reader ??= prepareReader(open()));
      const dataVersion = r.dataVersion.get()!.data_version;
      if (dataVersion === seenDataVersion) return undefined;
      seenDataVersion = dataVersion;
      const version = r.version.get()!.version;
      if (version === seenVersion) return undefined;
      seenVersion = version;
      return r.snapshot();
    },

    touch(used) {
      if (used.size === 0) return;
      immediate(() => {
        for (const [id, at] of used) w().touch.run({ id, at });
      });
    },

    close() {
      writer?.db.close();
      reader?.db.close();
      writer = reader = undefined;
    },
  };
}

export interface AuditRow {
  id: number;
  time: number;
  actor: string;
  action: string;
  target: string | null;
  detail: string;
}

export const auditEntryOf = (row: AuditRow): AuditEntry => ({ ...row, detail: JSON.parse(row.detail) as Record<string, unknown> });

export const settingsOf = (fields: KeyFields) => JSON.stringify(Object.fromEntries(SETTINGS.map((name) => [name, fields[name]])));

/** What a change sets, for the audit log: the checked fields only, which never hold a secret. */
export const publicFields = (changes: KeyChanges) => Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));

export function fieldsOf(row: Row): KeyFields {
  const settings = JSON.parse(row.settings) as Settings;
  return { ...settings, name: row.name, expires_at: row.expires_at, disabled: row.disabled === 1 };
}

const seconds = (ms: number) => Math.floor(ms / 1000);

export function recordOf(row: Row): KeyRecord {
  const { name, scopes, models, routes, upstreams, budget, rpm, tpm, expires_at, disabled, metadata } = fieldsOf(row);
  return {
    id: row.id, source: "runtime", name, prefix: row.prefix, scopes, models, routes, upstreams, budget, rpm, tpm, expires_at, disabled,
    revoked_at: row.revoked_at === null ? null : seconds(row.revoked_at), metadata,
    created_at: seconds(row.created_at), last_used_at: row.last_used_at === null ? null : seconds(row.last_used_at),
  };
}
