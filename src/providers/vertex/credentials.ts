import { GatewayError } from "../../errors.ts";
import { isObject, numberOr, stringOr } from "../../lib/read.ts";
import { fetchFailed, type Upstream } from "../../wire/upstream-errors.ts";
import type { UpstreamFetch } from "../kind.ts";
import { importPrivateKey, signedAssertion } from "./jwt.ts";
import { credentialSource, type VertexSettings } from "./settings.ts";

/**
 * Where a Vertex upstream's access tokens come from, first found first (contract 23): its
 * `access_token`; its `credentials_file`; GOOGLE_APPLICATION_CREDENTIALS; gcloud's
 * application-default credentials. A file is a service account's key (a signed JWT exchanged at
 * its `token_uri`) or an authorized user's refresh token (as `gcloud auth application-default
 * login` writes). `token_url` overrides where either is exchanged. Tokens are kept until a minute
 * before they expire, and callers at the same moment share one exchange.
 */

const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token";
/** A token is renewed this long before it expires. */
const MARGIN_MS = 60_000;

export interface Tokens {
  /** A token that is good for at least another minute. */
  token(): Promise<string>;
  /** The upstream refused the token: the next call asks for a new one. */
  forget(): void;
  /** Token exchanges made so far. */
  readonly exchanges: number;
}

export function createTokens(s: VertexSettings, up: Upstream, fetcher: UpstreamFetch = fetch, timeoutMs = 30_000): Tokens {
  const given = s.accessToken ?? s.apiKey;
  if (given) {
    const token = given;
    return { token: async () => token, forget() {}, exchanges: 0 };
  }
  const { source, file } = credentialSource(s);
  let exchange: (() => Promise<{ token: string; expiresAt: number }>) | undefined;
  let current: { token: string; expiresAt: number } | undefined;
  let pending: Promise<{ token: string; expiresAt: number }> | undefined;
  let exchanges = 0;

  async function prepare() {
    const text = await Bun.file(file!).text().catch(() => {
      throw notConfigured(up, `${source} names ${file}, which cannot be read`);
    });
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw notConfigured(up, `${file} is not JSON`);
    }
    if (!isObject(json)) throw notConfigured(up, `${file} is not a credentials object`);
    const url = s.tokenUrl ?? stringOr(json.token_uri) ?? GOOGLE_TOKEN_URL;
    const post = (body: URLSearchParams) => requestToken(up, fetcher, url, body, timeoutMs);
    if (json.type === "service_account") {
      const clientEmail = stringOr(json.client_email);
      const pem = stringOr(json.private_key);
      if (!clientEmail || !pem) throw notConfigured(up, `${file} has no client_email or private_key`);
      const key = await importPrivateKey(pem).catch(() => {
        throw notConfigured(up, `the private_key in ${file} cannot be read`);
      });
      const keyId = stringOr(json.private_key_id);
      // The audience is where the assertion is exchanged: Google's own token URL unless overridden.
      return async () => post(new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: await signedAssertion(key, { clientEmail, keyId }, url) }));
    }
    if (json.type === "authorized_user") {
      const [clientId, clientSecret, refreshToken] = [stringOr(json.client_id), stringOr(json.client_secret), stringOr(json.refresh_token)];
      if (!clientId || !clientSecret || !refreshToken) throw notConfigured(up, `${file} has no client_id, client_secret or refresh_token`);
      return async () => post(new URLSearchParams({ grant_type: "refresh_token", client_id: clientId, client_secret: clientSecret, refresh_token: refreshToken }));
    }
    throw notConfigured(up, `${file} holds credentials of type ${String(json.type)}: parley takes service_account and authorized_user`);
  }

  return {
    async token() {
      if (current && current.expiresAt - MARGIN_MS > Date.now()) return current.token;
      pending ??= (async () => {
        exchange ??= await prepare();
        exchanges++;
        return exchange();
      })().finally(() => (pending = undefined));
      current = await pending;
      return current.token;
    },
    forget() {
      current = undefined;
    },
    get exchanges() {
      return exchanges;
    },
  };
}

async function requestToken(up: Upstream, fetcher: UpstreamFetch, url: string, body: URLSearchParams, timeout: number) {
  const response = await fetcher(url, { method: "POST", body: body.toString(), headers: { "content-type": "application/x-www-form-urlencoded" }, timeout }).catch((error) => fetchFailed({ ...up, url }, error));
  const text = await response.text().catch((error) => fetchFailed({ ...up, url }, error, true));
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const reply = isObject(json) ? json : {};
  if (!response.ok) {
    const why = stringOr(reply.error_description) ?? stringOr(reply.error) ?? text.slice(0, 200);
    // Refused credentials (invalid_grant, a revoked key) are parley's to fix; a failing endpoint may answer next time.
    if (response.status < 500) throw new GatewayError(502, "service_unavailable_error", `${up.label}: Google refused parley's credentials (${why}): check ${up.credentials}.`, { upstream: why, upstreamStatus: response.status });
    throw new GatewayError(503, "service_unavailable_error", `${up.label}: Google's token endpoint failed (status ${response.status}).`, { upstream: why, upstreamStatus: response.status, retryable: true });
  }
  const token = stringOr(reply.access_token);
  if (!token) throw new GatewayError(503, "service_unavailable_error", `${up.label}: Google's token endpoint answered without an access_token.`, { retryable: true });
  return { token, expiresAt: Date.now() + (numberOr(reply.expires_in) ?? 3600) * 1000 };
}

/** Not configured, as a Bedrock upstream without credentials: a 404 no client retries. */
const notConfigured = (up: Upstream, why: string) => new GatewayError(404, "not_found_error", `${up.label} is not configured: ${why}. Set ${up.credentials}.`);
