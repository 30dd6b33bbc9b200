import type { BedrockSettings } from "../providers/bedrock/kind.ts";
import type { Upstream } from "../providers/kind.ts";
import { KINDS } from "../providers/kinds.ts";
import { DEFAULT_BASE_URL, type OpenAISettings } from "../providers/openai/kind.ts";
import type { FileRoute, UpstreamsFile } from "./upstreams-file.ts";

/** The settings' values by name (`ALPHA_BASE_URL`), as config.ts resolved them. */
type Values = Record<string, string | undefined>;

export interface Defaults {
  timeoutMs: number;
  retries: number;
}

/** Every upstream parley may call, in declaration order (the variables' first, the mock last), and the file's routes. */
export interface Declared {
  upstreams: Upstream[];
  routes: FileRoute[];
  /** The file they came from, when there is one. */
  file?: string;
}

/**
 * The spec's variables declare `alpha` (kind openai, `ALPHA_*`) and `beta` (kind bedrock, `BETA_*`),
 * configured or not; the file declares any number more (the same name replaces the variables' one);
 * the mock is always there.
 */
export function declareUpstreams(values: Values, defaults: Defaults, file?: UpstreamsFile): Declared {
  const common = { discover: true, headers: {}, ...defaults };
  const alpha: Upstream<OpenAISettings> = {
    name: "alpha", kind: "openai", ...common,
    settings: {
      baseUrl: (values.ALPHA_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, ""),
      ...(values.ALPHA_API_KEY ? { apiKey: values.ALPHA_API_KEY } : {}),
      systemOnTop: values.ALPHA_SYSTEM_MESSAGES?.toLowerCase() === "top",
    },
    origin: { variables: { api_key: "ALPHA_API_KEY (or OPENAI_API_KEY)", base_url: "ALPHA_BASE_URL" } },
  };
  const beta: Upstream<BedrockSettings> = {
    name: "beta", kind: "bedrock", ...common,
    settings: {
      ...pick(values, {
        region: "BETA_REGION", profile: "BETA_PROFILE", accessKeyId: "BETA_ACCESS_KEY_ID", secretAccessKey: "BETA_SECRET_ACCESS_KEY",
        sessionToken: "BETA_SESSION_TOKEN", apiKey: "BETA_API_KEY", endpointUrl: "BETA_ENDPOINT_URL", controlEndpointUrl: "BETA_CONTROL_ENDPOINT_URL",
      }),
      ...(values.BETA_ANTHROPIC_BETAS !== undefined ? { anthropicBetas: values.BETA_ANTHROPIC_BETAS.split(",").map((b) => b.trim()).filter(Boolean) } : {}),
    },
    origin: { variables: { region: "BETA_REGION" } },
  };
  const mock: Upstream = { name: "mock", kind: "mock", ...common, settings: {}, origin: {} };
  const upstreams: Upstream[] = [alpha, beta];
  for (const declared of file?.upstreams ?? []) {
    const { table } = declared;
    const upstream: Upstream = {
      name: declared.name,
      kind: declared.kind,
      settings: KINDS[declared.kind].settings(table),
      ...(table.models !== undefined ? { models: table.models as string[] } : {}),
      discover: table.models === undefined && table.discover !== false,
      timeoutMs: (table.timeout_ms as number | undefined) ?? defaults.timeoutMs,
      retries: (table.retries as number | undefined) ?? defaults.retries,
      headers: (table.headers as Record<string, string> | undefined) ?? {},
      origin: { file: file!.path },
    };
    const same = upstreams.findIndex((u) => u.name === upstream.name);
    if (same >= 0) upstreams[same] = upstream;
    else upstreams.push(upstream);
  }
  upstreams.push(mock);
  return { upstreams, routes: file?.routes ?? [], ...(file ? { file: file.path } : {}) };
}

function pick(values: Values, names: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, variable] of Object.entries(names)) if (values[variable] !== undefined) out[key] = values[variable]!;
  return out;
}

/** The upstreams the spec's variables declare, whatever the file says. */
export const SPEC_UPSTREAMS = ["alpha", "beta"] as const;

/** MODEL_ROUTES may name the spec's upstreams by their kind, as before there were others, unless an upstream has that name. */
export function upstreamNamed(name: string, declared: readonly Upstream[]): string {
  if (declared.some((u) => u.name === name)) return name;
  return name === "openai" ? "alpha" : name === "bedrock" ? "beta" : name;
}

/** What keeps an upstream from being called (a property of its kind): here for the callers that took it from here. */
export { missing } from "../providers/kinds.ts";
