import { SQL } from "bun";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./proc.ts";

/** initdb and pg_ctl of Debian's `postgresql` package (the newest version installed). */
function postgresBin(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error("Postgres is not installed (apt-get install postgresql); the Postgres tests need it");
  return join(root, newest, "bin");
}

/** Runs a Postgres tool as the `postgres` user (they refuse root); throws with its output on failure. */
async function asPostgres(args: string[]): Promise<void> {
  const command = process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", ...args] : args;
  const proc = Bun.spawn(command, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${args.join(" ")} exited ${code}: ${out}${err}`);
}

/**
 * A real Postgres on a free port, its cluster in a temporary folder, trusting local connections.
 * `stop` and `start` again make an outage that keeps the data, as a database restart does.
 */
export async function startPostgres() {
  const bin = postgresBin();
  // Not under the tests' TMPDIR: the postgres user cannot enter that (root's, mode 700).
  const dir = mkdtempSync(join(process.getuid?.() === 0 ? "/tmp" : tmpdir(), "parley-pg-"));
  const data = join(dir, "data");
  if (process.getuid?.() === 0) {
    const { uid, gid } = userIds("postgres");
    chownSync(dir, uid, gid);
  }
  const port = freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await asPostgres([join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;

  async function start() {
    await asPostgres([join(bin, "pg_ctl"), "-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "60", "start"]);
  }
  async function stop() {
    await asPostgres([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]);
  }
  /** A new database in the cluster, for one test's gateways; its URL. */
  async function database(name: string): Promise<string> {
    const sql = new SQL(url);
    await sql.unsafe(`CREATE DATABASE "${name}"`);
    await sql.close();
    return url.replace(/\/postgres$/, `/${name}`);
  }
  async function dispose() {
    await stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }

  await start();
  return { url, port, start, stop, database, dispose, [Symbol.asyncDispose]: dispose };
}

function userIds(name: string): { uid: number; gid: number } {
  const line = Bun.spawnSync(["getent", "passwd", name]).stdout.toString().trim();
  const [, , uid, gid] = line.split(":");
  if (!uid || !gid) throw new Error(`no user ${name} (the postgresql package creates it)`);
  return { uid: Number(uid), gid: Number(gid) };
}

export type TestPostgres = Awaited<ReturnType<typeof startPostgres>>;
