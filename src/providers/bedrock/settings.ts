import type { AwsSettings } from "../../lib/aws.ts";
import type { Upstream } from "../kind.ts";

export interface BedrockSettings extends AwsSettings {
  region?: string;
  /** A Bedrock API key, sent as a bearer token instead of SigV4. */
  apiKey?: string;
  endpointUrl?: string;
  controlEndpointUrl?: string;
  /** The `anthropic-beta` values passed on to Bedrock, for every model; unset: a built-in list per model. */
  anthropicBetas?: string[];
}

/** How errors name it: the spec's own upstream as before there were others, a declared one by its name. */
export const labelOf = (u: Upstream) => (u.origin.variables ? "AWS Bedrock" : `AWS Bedrock upstream '${u.name}'`);

/** How to give it credentials, for errors. */
export function credentialsOf(u: Upstream): string {
  if (u.origin.variables) return "BETA_API_KEY, or BETA_ACCESS_KEY_ID and BETA_SECRET_ACCESS_KEY, or BETA_PROFILE";
  return `api_key, or access_key_id and secret_access_key, or profile in [upstreams.${u.name}]`;
}
