const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** The largest multiple of 62 a byte can hold: bytes at or above it are drawn again, so no character is likelier than another. */
const UNBIASED_BELOW = 256 - (256 % ALPHABET.length);

export const SECRET_PREFIX = "pk-";
const SECRET_LENGTH = 40;
const ID_LENGTH = 16;
/** The part of a secret shown in lists (contract 19): `pk-` and 7 characters. */
export const PREFIX_LENGTH = 10;

/** `n` characters of [A-Za-z0-9] from the operating system's secure source, by rejection sampling. */
export function randomAlphanumeric(n: number): string {
  let out = "";
  const bytes = new Uint8Array(n * 2);
  while (out.length < n) {
    crypto.getRandomValues(bytes);
    for (const byte of bytes) {
      if (byte >= UNBIASED_BELOW) continue;
      out += ALPHABET[byte % ALPHABET.length];
      if (out.length === n) break;
    }
  }
  return out;
}

export const newSecret = () => SECRET_PREFIX + randomAlphanumeric(SECRET_LENGTH);
export const newKeyId = () => `key_${randomAlphanumeric(ID_LENGTH)}`;
export const isKeyId = (value: string) => /^key_[A-Za-z0-9]{16}$/.test(value);

/** What the database holds of a secret: its SHA-256, in hex. */
export const hashSecret = (secret: string): string => Bun.SHA256.hash(secret, "hex");
