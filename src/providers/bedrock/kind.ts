import { credentialKind } from "../../lib/aws.ts";
import { anthropicProfile, GEOS } from "../anthropic-models.ts";
import type { Kind, Upstream } from "../kind.ts";
import { known } from "../models.ts";
import type { BedrockSettings } from "./settings.ts";

export type { BedrockSettings } from "./settings.ts";

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
  // The region signs every call, endpoint_url or not: both shown (contract 26).
  where: (s) => [s.region, s.endpointUrl].filter(Boolean).join(" "),
  patterns: [new RegExp(`^((${GEOS})\\.)?(${VENDORS})\\.`), /^arn:aws:bedrock:/],
  // Claude's own names are called as the cross-region inference profile of the upstream's region.
  modelFor: (model, s) => anthropicProfile(model, s.region) ?? model,
  claude: 2,
  // ListFoundationModels leaves out ARNs, provisioned models and some inference profiles.
  unlistedIds: true,
  catalogue: known([
    ["anthropic.claude-3-5-sonnet-20241022-v2:0", "anthropic", "2024-10-22"],
    ["anthropic.claude-3-5-haiku-20241022-v1:0", "anthropic", "2024-10-22"],
    ["anthropic.claude-3-7-sonnet-20250219-v1:0", "anthropic", "2025-02-19"],
    ["us.anthropic.claude-sonnet-4-20250514-v1:0", "anthropic", "2025-05-14"],
    ["amazon.titan-text-express-v1", "amazon", "2023-11-29"],
    ["amazon.titan-text-lite-v1", "amazon", "2023-11-29"],
    ["amazon.nova-pro-v1:0", "amazon", "2024-12-03"],
    ["amazon.nova-lite-v1:0", "amazon", "2024-12-03"],
    ["meta.llama3-1-70b-instruct-v1:0", "meta", "2024-07-23"],
    ["mistral.mistral-large-2407-v1:0", "mistral", "2024-07-24"],
    ["cohere.command-r-plus-v1:0", "cohere", "2024-04-29"],
  ]),
};

const rename = (o: Record<string, string>, to: string): Record<string, string> => {
  const [value] = Object.values(o);
  return value === undefined ? {} : { [to]: value };
};

function regionSetting(u: Upstream): string {
  return u.origin.variables ? "BETA_REGION" : `region in [upstreams.${u.name}]`;
}
