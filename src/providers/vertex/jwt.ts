/**
 * A service account's signed JWT (RFC 7523), RS256 with its private key through WebCrypto: the
 * assertion Google's token endpoint exchanges for an access token.
 */

const SCOPE = "https://www.googleapis.com/auth/cloud-platform";
/** The longest a Google assertion may live. */
const LIFETIME_S = 3600;

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64url");

export async function importPrivateKey(pem: string): Promise<CryptoKey> {
  const der = Buffer.from(pem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, "").replace(/\s+/g, ""), "base64");
  return crypto.subtle.importKey("pkcs8", der, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
}

export async function signedAssertion(key: CryptoKey, account: { clientEmail: string; keyId?: string }, audience: string, now = Date.now()): Promise<string> {
  const iat = Math.floor(now / 1000);
  const header = { alg: "RS256", typ: "JWT", ...(account.keyId ? { kid: account.keyId } : {}) };
  const claims = { iss: account.clientEmail, scope: SCOPE, aud: audience, iat, exp: iat + LIFETIME_S };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, new TextEncoder().encode(input));
  return `${input}.${b64url(new Uint8Array(signature))}`;
}
