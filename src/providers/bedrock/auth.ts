import { credentialProvider, type Credentials } from "../../lib/aws.ts";
import { GatewayError } from "../../errors.ts";
import { unreachable, type Upstream } from "../../wire/upstream-errors.ts";
import type { BedrockSettings } from "./settings.ts";
import { createSigner, signRequest } from "./sigv4.ts";

export interface BedrockAuth {
  /** Headers for a JSON POST to the runtime. */
  post(host: string, path: string, accept: string, body: string): Promise<Record<string, string>>;
  /** Headers for a GET to the control plane. */
  get(host: string, path: string, query?: Record<string, string>): Promise<Record<string, string>>;
}

/**
 * A Bedrock API key goes as a bearer token (no signing); otherwise each call is SigV4-signed with
 * credentials from the keys, the profile or the AWS chain, asked again shortly before they expire.
 */
export function bedrockAuth(beta: BedrockSettings, up: Upstream): BedrockAuth {
  if (beta.apiKey) {
    const authorization = `Bearer ${beta.apiKey}`;
    return {
      post: async (_host, _path, accept) => ({ accept, "content-type": "application/json", authorization }),
      get: async () => ({ accept: "application/json", authorization }),
    };
  }
  const region = beta.region!;
  const sign = createSigner(region, "bedrock");
  const provide = credentialProvider(beta);
  let credentials: Credentials | undefined;
  const current = async () => {
    if (!credentials || expiresSoon(credentials)) credentials = await provide().catch((error) => credentialsMissing(up, error));
    return credentials;
  };
  return {
    post: async (host, path, accept, body) => sign(host, path, accept, body, await current()),
    get: async (host, path, query) => {
      const headers = { accept: "application/json" };
      return { ...headers, ...signRequest({ method: "GET", host, path, query, headers }, await current(), region, "bedrock") };
    },
  };
}

/** Credentials from SSO, a role or IMDS expire; asking the SDK's provider again refreshes them. */
const expiresSoon = (credentials: Credentials) => credentials.expiration !== undefined && credentials.expiration.getTime() - Date.now() < 5 * 60_000;

function credentialsMissing(up: Upstream, error: unknown): never {
  const e = error as { name?: string; message?: string };
  if (e?.name === "CredentialsProviderError") {
    // Not configured, as with no BETA_REGION: a 404 that no client retries.
    throw new GatewayError(404, "not_found_error", `${up.label} is not configured: set ${up.credentials}.`, { upstream: e.message });
  }
  throw unreachable(up, e?.message ?? String(error));
}
