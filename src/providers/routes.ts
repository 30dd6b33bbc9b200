import type { Config, ProviderName } from "../config.ts";
import { closeMatches } from "../did-you-mean.ts";
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

/** What the upstreams list, as model discovery knows it (nothing, when it is off). */
export interface Known {
  providerOf(id: string): ProviderName | undefined;
  ids(): string[];
}

const NOTHING_KNOWN: Known = { providerOf: () => undefined, ids: () => [] };

/**
 * Model id -> provider, first match wins: an alias (MODEL_ALIASES) names the model, then the
 * configured routes (MODEL_ROUTES), then the upstream that lists the id, then Anthropic's own names
 * (to Bedrock, as BETA_REGION's cross-region profile), then the built-in patterns.
 */
export function createRouter(config: Pick<Config, "modelAliases" | "modelRoutes"> & { beta?: Pick<Config["beta"], "region"> }, known: Known = NOTHING_KNOWN) {
  const custom: [RegExp, ProviderName][] = config.modelRoutes.map(({ pattern, provider }) => [glob(pattern), provider]);

  return function route(requested: string): Route {
    // No upstream has an id with a lone surrogate, and no URL path or header can carry one.
    if (!requested.isWellFormed()) throw unknownModel(requested, known.ids());
    const model = config.modelAliases.get(requested) ?? requested;
    const provider = custom.find(([pattern]) => pattern.test(model))?.[1] ?? known.providerOf(model);
    const profile = provider ? undefined : anthropicProfile(model, config.beta?.region);
    if (profile) return { requested, model: profile, provider: "beta" };
    const matched = provider ?? BUILT_IN.find(([pattern]) => pattern.test(model))?.[1];
    if (!matched) throw unknownModel(requested, known.ids());
    return { requested, model, provider: matched };
  };
}

/** Characters of an unknown model id the error quotes. */
const QUOTED = 200;

function unknownModel(requested: string, ids: string[]) {
  const near = closeMatches(requested, ids);
  const hint = near.length ? ` Did you mean ${near.map((id) => `'${id}'`).join(", ")}?` : "";
  const quoted = requested.length > QUOTED ? `${requested.slice(0, QUOTED)}…' (${requested.length} characters)` : `${requested}'`;
  return notFound(`The model '${quoted} is not routed to any provider.${hint} Use an id from GET /v1/models, or route it with MODEL_ROUTES (pattern=alpha|beta) or MODEL_ALIASES (alias=model).`);
}

export type Router = ReturnType<typeof createRouter>;

function glob(pattern: string): RegExp {
  const source = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${source}$`);
}
