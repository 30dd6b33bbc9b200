import type { Config, ProviderName } from "../config.ts";
import { notFound } from "../errors.ts";
import type { Listers } from "./discovery.ts";
import type { Provider } from "./provider.ts";

/** What a provider needs before parley can call it; the mock needs nothing. */
export function configuredProviders(config: Config): Record<ProviderName, boolean> {
  return {
    alpha: !!config.alpha.apiKey || config.alpha.custom,
    beta: !!config.beta.region,
    mock: true,
  };
}

/**
 * A 404, not a 503: nothing the client retries changes it (Claude Code retried a 503 in silence for
 * three minutes), and the message says what to set.
 */
const MISSING: Record<ProviderName, string> = {
  alpha: "OpenAI is not configured: set ALPHA_API_KEY (or ALPHA_BASE_URL for an OpenAI-compatible server).",
  beta: "AWS Bedrock is not configured: set BETA_REGION and credentials (BETA_ACCESS_KEY_ID and BETA_SECRET_ACCESS_KEY, or BETA_PROFILE).",
  mock: "",
};

/** Providers are built on first use, so a server that never calls Bedrock never loads its code. */
export function createProviders(config: Config) {
  const configured = configuredProviders(config);
  const built = new Map<ProviderName, Promise<Provider>>();
  const load: Record<ProviderName, () => Promise<Provider>> = {
    alpha: () => import("./openai/provider.ts").then((m) => m.createOpenAIProvider(config)),
    beta: () => import("./bedrock/provider.ts").then((m) => m.createBedrockProvider(config)),
    mock: () => import("./mock/provider.ts").then((m) => m.createMockProvider()),
  };
  const ready = new Map<ProviderName, Provider>();
  const provider = (name: ProviderName): Promise<Provider> => {
    if (!configured[name]) throw notFound(MISSING[name]);
    let instance = built.get(name);
    if (!instance) {
      built.set(name, (instance = load[name]()));
      instance.then((p) => ready.set(name, p), () => {});
    }
    return instance;
  };
  /** The provider when it is built already: a request need not wait a turn for it. */
  provider.loaded = (name: ProviderName): Provider | undefined => ready.get(name);
  return provider;
}

export type Providers = ReturnType<typeof createProviders>;

/** How each configured provider lists its models, for discovery (loaded on first use, like the providers). */
export function modelListers(config: Config): Listers {
  const configured = configuredProviders(config);
  return {
    ...(configured.alpha ? { alpha: () => import("./openai/models.ts").then((m) => m.listOpenAIModels(config)) } : {}),
    ...(configured.beta
      ? {
          beta: async () => {
            const { createBedrockControl } = await import("./bedrock/control.ts");
            return (await createBedrockControl(config.beta, config.upstreamTimeoutMs).models()).map(({ id, vendor, created }) => ({ id, owned_by: vendor, created }));
          },
        }
      : {}),
  };
}
