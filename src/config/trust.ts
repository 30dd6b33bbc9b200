/**
 * The working directory's `./.env` and `./parley.toml` are read only once trusted, as `mise trust`
 * does it (contract 25): a cloned repository must not point the user's keys at its own URLs.
 * `parley trust` records the folder and each file's SHA-256 in the user config dir; a file that is
 * untrusted, or changed since, is not read. PARLEY_TRUST_CWD=1 trusts them without asking (CI),
 * PARLEY_TRUST_CWD=0 never reads them. Files named explicitly (--upstreams, PARLEY_UPSTREAMS) are
 * the user's choice and always read.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { ConfigError } from "./values.ts";

/** The working directory's files parley picks up without being told. */
export const CWD_FILES = [".env", "parley.toml"] as const;

export type TrustMode = "ask" | "always" | "never";

/** Why a file was not read: never trusted, or changed since. */
export interface Untrusted {
  path: string;
  changed: boolean;
}

/** PARLEY_TRUST_CWD, read from the flags and the environment only: a file cannot vouch for itself. */
export function trustMode(value: string | undefined): TrustMode {
  if (value === undefined || value.trim() === "") return "ask";
  const v = value.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(v)) return "always";
  if (["0", "false", "no", "off"].includes(v)) return "never";
  throw new ConfigError(`PARLEY_TRUST_CWD=${JSON.stringify(value)} is invalid: expected 1 (trust the working directory's .env and parley.toml) or 0 (never read them)`);
}

const storeOf = (configDir: string) => join(configDir, "trusted.json");

type Store = Record<string, Record<string, string>>;

function readStore(configDir: string): Store {
  try {
    const parsed = JSON.parse(readFileSync(storeOf(configDir), "utf8"));
    return parsed && typeof parsed === "object" ? (parsed as Store) : {};
  } catch {
    return {};
  }
}

const sha256 = (path: string) => new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");

/**
 * Whether the working directory's file at `path` may be read; when not, why (for the line `serve`
 * prints). A file that does not exist is neither.
 */
export function checkTrust(path: string, mode: TrustMode, configDir: string): { read: boolean; untrusted?: Untrusted } {
  if (!existsSync(path)) return { read: false };
  if (mode === "always") return { read: true };
  if (mode === "never") return { read: false };
  const recorded = readStore(configDir)[resolve(dirname(path))]?.[basename(path)];
  if (recorded !== undefined && recorded === sha256(path)) return { read: true };
  return { read: false, untrusted: { path, changed: recorded !== undefined } };
}

/** `parley trust`: records the folder's files as they are now; returns the ones recorded. */
export function trustFolder(folder: string, configDir: string): string[] {
  const store = readStore(configDir);
  const key = resolve(folder);
  const found = CWD_FILES.filter((name) => existsSync(join(key, name)));
  store[key] = Object.fromEntries(found.map((name) => [name, sha256(join(key, name))]));
  mkdirSync(configDir, { recursive: true, mode: 0o700 });
  writeFileSync(storeOf(configDir), `${JSON.stringify(store, null, 2)}\n`, { mode: 0o600 });
  return found.map((name) => join(key, name));
}

/** The line `serve` prints for a file it did not read. */
export const untrustedLine = ({ path, changed }: Untrusted) =>
  `${path} ${changed ? "has changed since it was trusted" : "is not trusted"}, so parley did not read it: run \`parley trust\` in ${dirname(path)} to use it (or set PARLEY_TRUST_CWD=1)`;
