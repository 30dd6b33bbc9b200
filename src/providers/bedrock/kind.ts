import { credentialKind, type AwsSettings } from "../../lib/aws.ts";
import { anthropicProfile, GEOS } from "../anthropic-models.ts";
import type { Kind, Upstream } from "../kind.ts";

export interface BedrockSettings extends AwsSettings {
  region?: string;
  /** A Bedrock API key, sent as a bearer token instead of SigV4. */
  apiKey?: string;
  endpointUrl?: string;
  controlEndpointUrl?: string;
  /** The `anthropic-beta` values passed on to Bedrock, for every model; unset: a built-in list per model. */
  anthropicBetas?: string[];
}

const VENDORS = "anthropic|amazon|ai21|cohere|meta|mistral|deepseek|qwen|openai|writer";

/** AWS Bedrock Runtime: one account (credentials) in one region. */
export const bedrockKind: Kind<BedrockSettings> = {
  keys: {
    region: "string", profile: "string", access_key_id: "string", secret_access_key: "string", session_token: "string",
    api_key: "string", endpoint_url: "string", control_endpoint_url: "string", anthropic_betas: "strings",
  },
  required: ["region"],
  secrets: ["access_key_id", "secret_access_key", "session_token", "api_key"],
  settings: (t) => {
    const s = (key: string) => (t[key] === undefined ? {} : { [key]: String(t[key]) });
    return {
      region: String(t.region),
      ...rename(s("profile"), "profile"),
      ...rename(s("access_key_id"), "accessKeyId"),
      ...rename(s("secret_access_key"), "secretAccessKey"),
      ...rename(s("session_token"), "sessionToken"),
      ...rename(s("api_key"), "apiKey"),
      ...rename(s("endpoint_url"), "endpointUrl"),
      ...rename(s("control_endpoint_url"), "controlEndpointUrl"),
      ...(t.anthropic_betas !== undefined ? { anthropicBetas: t.anthropic_betas as string[] } : {}),
    };
  },
  missing: (u) => (u.settings.region ? undefined : `set ${regionSetting(u)} and credentials`),
  build: (u) => import("./provider.ts").then((m) => m.createBedrockProvider(u)),
  list: async (u) => {
    const { createBedrockControl } = await import("./control.ts");
    return (await createBedrockControl(u).models()).map(({ id, vendor, created }) => ({ id, owned_by: vendor, created }));
  },
  credentials: (s) => credentialKind(s),
  where: (s) => s.endpointUrl ?? s.region ?? "",
  patterns: [new RegExp(`^((${GEOS})\\.)?(${VENDORS})\\.`), /^arn:aws:bedrock:/],
  // Claude's own names are called as the cross-region inference profile of the upstream's region.
  modelFor: (model, s) => anthropicProfile(model, s.region) ?? model,
  claude: 2,
};

const rename = (o: Record<string, string>, to: string): Record<string, string> => {
  const [value] = Object.values(o);
  return value === undefined ? {} : { [to]: value };
};

function regionSetting(u: Upstream): string {
  return u.origin.variables ? "BETA_REGION" : `region in [upstreams.${u.name}]`;
}

/** How errors name it: the spec's own upstream as before there were others, a declared one by its name. */
export const labelOf = (u: Upstream) => (u.origin.variables ? "AWS Bedrock" : `AWS Bedrock upstream '${u.name}'`);

/** How to give it credentials, for errors. */
export function credentialsOf(u: Upstream): string {
  if (u.origin.variables) return "BETA_API_KEY, or BETA_ACCESS_KEY_ID and BETA_SECRET_ACCESS_KEY, or BETA_PROFILE";
  return `api_key, or access_key_id and secret_access_key, or profile in [upstreams.${u.name}]`;
}
