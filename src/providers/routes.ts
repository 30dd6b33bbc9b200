import type { Config, ProviderName } from "../config.ts";
import { notFound } from "../errors.ts";
import { anthropicProfile } from "./anthropic-models.ts";

const BEDROCK_VENDORS = "anthropic|amazon|ai21|cohere|meta|mistral|deepseek|qwen|openai|writer";
const BEDROCK_GEOS = "us|eu|apac|global|us-gov|jp|au|ca";

const BUILT_IN: [RegExp, ProviderName][] = [
  [/^(gpt-|text-|dall-e-|chatgpt-|o1|o3|o4|ft:)/, "alpha"],
  [new RegExp(`^((${BEDROCK_GEOS})\\.)?(${BEDROCK_VENDORS})\\.`), "beta"],
  [/^arn:aws:bedrock:/, "beta"],
  [/^mock(\/|$)/, "mock"],
];

export interface Route {
  /** The id the client asked for: replies carry it. */
  requested: string;
  /** The id sent upstream, after aliases. */
  model: string;
  provider: ProviderName;
}

/**
 * Model id -> provider: configured aliases and routes first, then Anthropic's own names (to
 * Bedrock, as BETA_REGION's cross-region profile), then the built-in patterns.
 */
export function createRouter(config: Pick<Config, "modelAliases" | "modelRoutes"> & { beta?: Pick<Config["beta"], "region"> }) {
  const custom: [RegExp, ProviderName][] = config.modelRoutes.map(({ pattern, provider }) => [glob(pattern), provider]);
  const table = [...custom, ...BUILT_IN];

  return function route(requested: string): Route {
    const model = config.modelAliases.get(requested) ?? requested;
    const own = custom.find(([pattern]) => pattern.test(model));
    const profile = own ? undefined : anthropicProfile(model, config.beta?.region);
    if (profile) return { requested, model: profile, provider: "beta" };
    const match = own ?? table.find(([pattern]) => pattern.test(model));
    if (!match) {
      throw notFound(`The model '${requested}' is not routed to any provider: use a known id (GET /v1/models), or route it with MODEL_ROUTES (pattern=alpha|beta) or MODEL_ALIASES (alias=model).`);
    }
    return { requested, model, provider: match[1] };
  };
}

export type Router = ReturnType<typeof createRouter>;

function glob(pattern: string): RegExp {
  const source = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${source}$`);
}
