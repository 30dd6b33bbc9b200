import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * What parley hands a client to bring back unchanged (a Responses reasoning or compaction item's
 * `encrypted_content`), sealed: AES-256-GCM under a key kept in the data dir, so a client can
 * neither read nor forge it (contract 26). `parley.v1.` + base64url(key id, nonce, ciphertext, tag);
 * the key id lets every key a process has loaded open what it sealed (tests run several apps).
 */
const PREFIX = "parley.v1.";
const ID_BYTES = 8;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const FILE = "seal.key";

const keys = new Map<string, Buffer>();
let dir: string | undefined;
let current: { id: Buffer; key: Buffer } | undefined;

/** Where the key is (created on first use, readable by its owner only). */
export function sealKeyIn(dataDir: string): void {
  dir = dataDir;
  current = undefined;
}

export const isSealed = (text: string) => text.startsWith(PREFIX);

export function seal(payload: unknown): string {
  const { id, key } = (current ??= load());
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  const body = Buffer.concat([cipher.update(JSON.stringify(payload), "utf8"), cipher.final()]);
  return PREFIX + Buffer.concat([id, nonce, body, cipher.getAuthTag()]).toString("base64url");
}

/** What `seal` sealed; undefined for anything else: not parley's, changed, or sealed under a key this process does not have. */
export function unseal(text: string): unknown {
  if (!isSealed(text)) return undefined;
  current ??= load();
  const bytes = Buffer.from(text.slice(PREFIX.length), "base64url");
  if (bytes.length < ID_BYTES + NONCE_BYTES + TAG_BYTES) return undefined;
  const key = keys.get(bytes.subarray(0, ID_BYTES).toString("hex"));
  if (!key) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(ID_BYTES, ID_BYTES + NONCE_BYTES));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    const plain = Buffer.concat([decipher.update(bytes.subarray(ID_BYTES + NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
    return JSON.parse(plain.toString("utf8"));
  } catch {
    return undefined;
  }
}

/** The data dir's key, made on first use; without a data dir (a codec used alone), one for this process. */
function load(): { id: Buffer; key: Buffer } {
  const key = dir ? fileKey(dir) : randomBytes(32);
  const id = createHash("sha256").update(key).digest().subarray(0, ID_BYTES);
  keys.set(id.toString("hex"), key);
  return { id, key };
}

function fileKey(dataDir: string): Buffer {
  const path = join(dataDir, FILE);
  try {
    const key = Buffer.from(readFileSync(path, "utf8").trim(), "base64");
    if (key.length === 32) return key;
  } catch {
    // none yet: made below
  }
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  // `wx`: when two workers make it at once, one wins and the other reads the winner's.
  try {
    writeFileSync(path, `${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" });
    chmodSync(path, 0o600);
    return key;
  } catch {
    return Buffer.from(readFileSync(path, "utf8").trim(), "base64");
  }
}
