import { homedir } from "node:os";
import { join } from "node:path";
import type { Upstream } from "../kind.ts";

export interface VertexSettings {
  project: string;
  /** A Google Cloud region, or `global`. */
  region: string;
  /** A token sent as it is (it expires: for tests and short sessions). */
  accessToken?: string;
  /**
   * Set only by replay (cassettes/offline.ts), which gives every upstream without a key a stand-in
   * `apiKey`: taken as an access token, so replay tries no token exchange.
   */
  apiKey?: string;
  /** A service-account key file (or an authorized-user file, as gcloud writes). */
  credentialsFile?: string;
  /** Where tokens are asked for, instead of the credentials' own `token_uri`. */
  tokenUrl?: string;
  /** Instead of the region's host (tests, private endpoints). */
  baseUrl?: string;
}

export const DEFAULT_REGION = "global";

/** The region's host: `global` has none of its own. */
export function hostOf(s: VertexSettings): string {
  if (s.baseUrl) return s.baseUrl;
  return s.region === "global" ? "https://aiplatform.googleapis.com" : `https://${s.region}-aiplatform.googleapis.com`;
}

/** `…/v1/projects/{p}/locations/{r}/publishers/{publisher}/models/{model}:{method}`. */
export const modelUrl = (s: VertexSettings, publisher: "anthropic" | "google", model: string, method: string) =>
  `${hostOf(s)}/v1/projects/${encodeURIComponent(s.project)}/locations/${encodeURIComponent(s.region)}/publishers/${publisher}/models/${encodeURIComponent(model)}:${method}`;

export const labelOf = (u: Upstream) => `Vertex AI upstream '${u.name}'`;

export function credentialsOf(u: Upstream): string {
  return `access_token or credentials_file in [upstreams.${u.name}], or GOOGLE_APPLICATION_CREDENTIALS, or gcloud's application-default credentials (gcloud auth application-default login)`;
}

/** Where the credentials come from, first found first (see credentials.ts). */
export type CredentialSource = "access token" | "credentials file" | "GOOGLE_APPLICATION_CREDENTIALS" | "application-default credentials";

export function credentialSource(s: VertexSettings, env = process.env): { source: CredentialSource; file?: string } {
  if (s.accessToken ?? s.apiKey) return { source: "access token" };
  if (s.credentialsFile) return { source: "credentials file", file: s.credentialsFile };
  if (env.GOOGLE_APPLICATION_CREDENTIALS) return { source: "GOOGLE_APPLICATION_CREDENTIALS", file: env.GOOGLE_APPLICATION_CREDENTIALS };
  return { source: "application-default credentials", file: join(env.CLOUDSDK_CONFIG ?? join(homedir(), ".config", "gcloud"), "application_default_credentials.json") };
}
