import { maskSecrets } from "../secrets.ts";
import { mkdir, rename, unlink, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { GatewayError } from "../errors.ts";
import { emptyHar, type Configured, type Har, type HarEntry } from "./har.ts";
import { callOf, type Call } from "./match.ts";

/**
 * One cassette file, read once and kept in memory. Calls with the same key replay in recorded
 * order. Writes are one at a time per file, each a whole new file renamed over the old (a reader
 * never sees half a file), and entries added during a write go into the next one.
 */
/** How long a write waits for more entries to write with it. */
const GATHER_MS = 100;

export async function openCassette(file: string) {
  const har = await read(file);
  const keys = har.log.entries.map(keyOf);
  /** How many calls of each key were answered so far (replayed or recorded). */
  const used = new Map<string, number>();
  /** Keys recorded by this process: a new recording of any other key replaces the file's old ones (record mode). */
  const recorded = new Set<string>();
  let writing: Promise<void> | undefined;
  let again = false;

  const save = (): Promise<void> => {
    if (writing) {
      again = true;
      return writing;
    }
    writing = (async () => {
      try {
        do {
          // Each write is the whole file: gather what comes in the next moment into one (a long
          // recording session would otherwise write the growing file once per call).
          await Bun.sleep(GATHER_MS);
          again = false;
          await writeAtomically(file, `${JSON.stringify(har, null, 2)}\n`);
        } while (again);
      } finally {
        writing = undefined;
      }
    })();
    return writing;
  };

  return {
    file,
    entries: har.log.entries as readonly HarEntry[],
    /** The recording that answers this call, in turn; past the last one: undefined, or the first again when `cycle`. */
    next(call: Call, cycle: boolean): HarEntry | undefined {
      const n = used.get(call.key) ?? 0;
      used.set(call.key, n + 1);
      const matching = har.log.entries.filter((_, i) => keys[i] === call.key);
      if (matching.length === 0) return undefined;
      return n < matching.length ? matching[n] : cycle ? matching[n % matching.length] : undefined;
    },
    /** Writes a call down, and the upstreams configured as it was made; `fresh`: it replaces what an earlier session recorded for the same call. */
    add(call: Call, entry: HarEntry, fresh: boolean, configured: Configured): Promise<void> {
      har.log._upstreams = fresh ? configured : { ...har.log._upstreams, ...configured };
      if (fresh && !recorded.has(call.key)) {
        for (let i = keys.length - 1; i >= 0; i--) {
          if (keys[i] !== call.key) continue;
          keys.splice(i, 1);
          har.log.entries.splice(i, 1);
        }
      }
      recorded.add(call.key);
      keys.push(call.key);
      har.log.entries.push(entry);
      return save().catch((error) => {
        throw new GatewayError(500, "internal_server_error", `The cassette ${file} could not be written: ${error instanceof Error ? error.message : String(error)}`);
      });
    },
    /** Done when every entry added so far is on disk. */
    saved: (): Promise<void> => writing ?? Promise.resolve(),
  };
}

export type Cassette = Awaited<ReturnType<typeof openCassette>>;

/** An entry's key, as callOf makes a live call's. */
export const entryCall = (entry: HarEntry): Call =>
  callOf(entry._upstream, entry._kind, entry.request.method, entry.request.url, entry.request.postData?.text ?? "");

const keyOf = (entry: HarEntry) => entryCall(entry).key;

async function read(file: string): Promise<Har> {
  const source = Bun.file(file);
  if (!(await source.exists())) return emptyHar();
  let har: Har;
  try {
    har = JSON.parse(await source.text());
  } catch (error) {
    throw broken(file, `not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!Array.isArray(har?.log?.entries)) throw broken(file, "no log.entries");
  const stray = har.log.entries.findIndex((e) => typeof e?._upstream !== "string" || typeof e?._kind !== "string" || typeof e?.request?.url !== "string");
  if (stray >= 0) throw broken(file, `log.entries[${stray}] was not recorded by parley (no _upstream, _kind or request.url)`);
  return har;
}

const broken = (file: string, why: string) => new GatewayError(500, "internal_server_error", `The cassette ${file} cannot be read: ${why}.`);

async function writeAtomically(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    // A cassette may hold what an upstream said about a user: this user's alone (contract 25).
    // By value too: a secret under a header or query name no rule foresaw (X-Tenant-Pass, `code`) is masked.
    await writeFile(temp, maskSecrets(text), { mode: 0o600 });
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}
