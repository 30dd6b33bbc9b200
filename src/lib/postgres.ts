import { SQL } from "bun";

/**
 * A pool of connections to DATABASE_URL (Bun's own client); a dropped connection is made again on
 * the next query. Two: a write and a read at once is all usage, or keys, ever need, and every
 * worker of every gateway holds its own pools against the server's max_connections (100 by default).
 */
export function connectPostgres(url: string, max = 2): SQL {
  return new SQL(url, { max, idleTimeout: 30, connectionTimeout: 5 });
}

/** One number for every parley: the advisory lock its migrations run under. */
const MIGRATION_LOCK = 0x7061726c; // "parl"

/**
 * Brings a schema up to date: numbered migrations (statements, in order), each applied once and
 * recorded in `table`, all under one transaction-scoped advisory lock, so that ten gateways
 * starting at once migrate once (the others wait for the lock, then find nothing left to do).
 * Says which versions it applied.
 */
export async function migratePostgres(sql: SQL, table: string, migrations: readonly string[][]): Promise<number[]> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${table} (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`);
    const [{ v }] = await tx.unsafe(`SELECT COALESCE(MAX(version), 0)::int AS v FROM ${table}`);
    const applied: number[] = [];
    for (let version = v + 1; version <= migrations.length; version++) {
      for (const statement of migrations[version - 1]!) await tx.unsafe(statement);
      await tx.unsafe(`INSERT INTO ${table} (version, applied_at) VALUES ($1, $2)`, [version, Date.now()]);
      applied.push(version);
    }
    return applied;
  });
}
