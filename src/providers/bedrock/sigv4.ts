import type { Credentials } from "../../lib/aws.ts";

/**
 * AWS Signature Version 4 for a POST with a JSON body, as Bedrock Runtime takes it. Written out
 * because the SDK's general signer cost ~45 µs a call, more than the rest of a converted request;
 * this one is a few µs: the only parts that change between calls are the time, the path and the
 * body's hash. The tests' fake Bedrock checks every signature with the SDK's signer.
 */
export function createSigner(region: string, service: string) {
  let key: { day: string; secret: string; value: Buffer } | undefined;
  let clock = { second: 0, amzDate: "" };
  const paths = new Map<string, string>();

  /** The headers to send for a POST of `body` to `host` + `path` (no query string). */
  return function sign(host: string, path: string, accept: string, body: string, credentials: Credentials, now = Date.now()): Record<string, string> {
    const second = Math.floor(now / 1000);
    if (clock.second !== second) clock = { second, amzDate: new Date(second * 1000).toISOString().replace(/[-:]|\.\d{3}/g, "") };
    const { amzDate } = clock;
    const day = amzDate.slice(0, 8);
    if (key?.day !== day || key.secret !== credentials.secretAccessKey) {
      const signingKey = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), region), service), "aws4_request");
      key = { day, secret: credentials.secretAccessKey, value: signingKey };
    }
    let canonicalUri = paths.get(path);
    if (canonicalUri === undefined) {
      if (paths.size >= 1000) paths.clear();
      paths.set(path, (canonicalUri = canonicalPath(path)));
    }
    const token = credentials.sessionToken;
    // Header names sorted, as SigV4 wants them.
    const signedHeaders = token ? "accept;content-type;host;x-amz-date;x-amz-security-token" : "accept;content-type;host;x-amz-date";
    const canonical = `POST\n${canonicalUri}\n\naccept:${accept}\ncontent-type:application/json\nhost:${host}\nx-amz-date:${amzDate}\n${token ? `x-amz-security-token:${token}\n` : ""}\n${signedHeaders}\n${sha256(body)}`;
    const scope = `${day}/${region}/${service}/aws4_request`;
    const signature = hmac(key.value, `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${sha256(canonical)}`).toString("hex");
    const headers: Record<string, string> = {
      accept,
      "content-type": "application/json",
      "x-amz-date": amzDate,
      authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
    };
    if (token) headers["x-amz-security-token"] = token;
    return headers;
  };
}

export interface SignedRequest {
  method: string;
  host: string;
  /** The path as the signer should see it: the wire path, for AWS's "encode once more" rule. */
  path: string;
  /** Pairs as sent (a repeated name kept), or one value per name. */
  query?: Record<string, string> | [string, string][];
  headers?: Record<string, string>;
  body?: string;
}

/**
 * SigV4 for any request: the general form, for the few control-plane calls (model discovery).
 * Checked against AWS's published test suite; the fast signer above must agree with it.
 * Returns the headers to add: x-amz-date, the session token when there is one, and authorization.
 */
export function signRequest(request: SignedRequest, credentials: Credentials, region: string, service: string, now = Date.now()): Record<string, string> {
  const amzDate = new Date(Math.floor(now / 1000) * 1000).toISOString().replace(/[-:]|\.\d{3}/g, "");
  const day = amzDate.slice(0, 8);
  const added: Record<string, string> = { "x-amz-date": amzDate, ...(credentials.sessionToken ? { "x-amz-security-token": credentials.sessionToken } : {}) };
  const headers = new Map<string, string>();
  for (const [name, value] of Object.entries({ host: request.host, ...request.headers, ...added })) headers.set(name.toLowerCase(), value.trim().replace(/\s+/g, " "));
  const names = [...headers.keys()].sort();
  const signedHeaders = names.join(";");
  const canonical = [
    request.method,
    canonicalPath(request.path),
    canonicalQuery(request.query),
    names.map((name) => `${name}:${headers.get(name)}\n`).join(""),
    signedHeaders,
    sha256(request.body ?? ""),
  ].join("\n");
  const scope = `${day}/${region}/${service}/aws4_request`;
  const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), region), service), "aws4_request");
  const signature = hmac(key, `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${sha256(canonical)}`).toString("hex");
  return { ...added, authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}` };
}

/** A query string as SigV4 signs it, and as it must then be sent: RFC 3986 encoding, sorted. */
export function canonicalQuery(query: Record<string, string> | [string, string][] = {}): string {
  const pairs = (Array.isArray(query) ? query : Object.entries(query)).map(([k, v]) => [rfc3986(k), rfc3986(v)] as const);
  pairs.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join("&");
}

const rfc3986 = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Every service but S3 signs the path URI-encoded once more, segment by segment. */
function canonicalPath(path: string): string {
  return path.split("/").map(rfc3986).join("/");
}

const hmac = (key: string | Buffer, data: string) => new Bun.CryptoHasher("sha256", key).update(data).digest();
const sha256 = (data: string) => Bun.SHA256.hash(data, "hex");
