import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config.ts";

/** Loads the configuration as `serve` does, from a working directory holding this parley.toml. */
function load(toml: string, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "parley-db-table-"));
  mkdirSync(join(dir, "config"));
  writeFileSync(join(dir, "parley.toml"), toml);
  try {
    // Named by PARLEY_UPSTREAMS: read whatever the working folder's trust (contract 25).
    return loadConfig({ env: { HOME: dir, PARLEY_CONFIG_DIR: join(dir, "config"), PARLEY_DATA_DIR: join(dir, "data"), PARLEY_UPSTREAMS: join(dir, "parley.toml"), ...env }, cwd: dir }).config;
  } catch (error) {
    if (error instanceof ConfigError) return error.message.replace(`${dir}/`, "");
    throw error;
  }
}

describe("[database] url in parley.toml (contract 21)", () => {
  test("sets DATABASE_URL, its ${VAR}s read from the environment; DATABASE_URL set elsewhere wins", () => {
    const toml = '[database]\nurl = "postgres://parley:${PG_PASSWORD}@db.internal:5432/parley"\n';
    expect((load(toml, { PG_PASSWORD: "s3cret" }) as { databaseUrl?: string }).databaseUrl).toBe("postgres://parley:s3cret@db.internal:5432/parley");
    expect((load(toml, { PG_PASSWORD: "s3cret", DATABASE_URL: "postgres://other/db" }) as { databaseUrl?: string }).databaseUrl).toBe("postgres://other/db");
    expect((load("") as { databaseUrl?: string }).databaseUrl).toBeUndefined();
  });

  test("a mistake in it is refused with the file's line, never echoing the URL", () => {
    expect(load('[database]\nurl = "mysql://u:pw@db/x"\n')).toBe("parley.toml:2: url in [database] must be a postgres:// or postgresql:// URL");
    expect(load('[database]\nhost = "db"\n')).toStartWith("parley.toml:2: unknown key 'host' in [database]");
    expect(load('[database]\nurl = "postgres://u:${NOPE}@db/x"\n')).toBe("parley.toml:2: ${NOPE} is not set (used in [database] url)");
    expect(load("database = 5\n")).toBe("parley.toml:1: database must be a table: [database]");
  });
});
