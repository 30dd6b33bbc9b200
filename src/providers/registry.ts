import type { Config, ProviderName } from "../config.ts";

/** What a provider needs before parley can call it, and the variable that supplies it. */
export function configuredProviders(config: Config): Record<ProviderName, boolean> {
  return {
    alpha: !!config.alpha.apiKey || config.alpha.custom,
    beta: !!config.beta.region,
  };
}
