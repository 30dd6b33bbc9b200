import type { ProviderName } from "../config.ts";

/** Well-known models; any id that routes can still be used. Dates are the vendors' release days. */
const KNOWN: [ProviderName, string, string, string][] = [
  ["alpha", "gpt-4o", "openai", "2024-05-13"],
  ["alpha", "gpt-4o-mini", "openai", "2024-07-18"],
  ["alpha", "gpt-4.1", "openai", "2025-04-14"],
  ["alpha", "gpt-4.1-mini", "openai", "2025-04-14"],
  ["alpha", "o3-mini", "openai", "2025-01-31"],
  ["alpha", "o4-mini", "openai", "2025-04-16"],
  ["beta", "anthropic.claude-3-5-sonnet-20241022-v2:0", "anthropic", "2024-10-22"],
  ["beta", "anthropic.claude-3-5-haiku-20241022-v1:0", "anthropic", "2024-10-22"],
  ["beta", "anthropic.claude-3-7-sonnet-20250219-v1:0", "anthropic", "2025-02-19"],
  ["beta", "us.anthropic.claude-sonnet-4-20250514-v1:0", "anthropic", "2025-05-14"],
  ["beta", "amazon.titan-text-express-v1", "amazon", "2023-11-29"],
  ["beta", "amazon.titan-text-lite-v1", "amazon", "2023-11-29"],
  ["beta", "amazon.nova-pro-v1:0", "amazon", "2024-12-03"],
  ["beta", "amazon.nova-lite-v1:0", "amazon", "2024-12-03"],
  ["beta", "meta.llama3-1-70b-instruct-v1:0", "meta", "2024-07-23"],
  ["beta", "mistral.mistral-large-2407-v1:0", "mistral", "2024-07-24"],
  ["beta", "cohere.command-r-plus-v1:0", "cohere", "2024-04-29"],
  ["mock", "mock", "parley", "2026-11-22"],
  ["mock", "mock/tools", "parley", "2026-11-22"],
  ["mock", "mock/slow", "parley", "2026-11-22"],
  ["mock", "mock/error-429", "parley", "2026-11-22"],
  ["mock", "mock/error-503", "parley", "2026-11-22"],
];

const unix = (day: string) => Math.floor(Date.parse(day) / 1000);

/** The built-in list of a provider's models: what /v1/models shows when discovery has nothing. */
export function catalogue(provider: ProviderName): { id: string; owned_by: string; created: number }[] {
  return KNOWN.filter(([p]) => p === provider).map(([, id, owned_by, day]) => ({ id, owned_by, created: unix(day) }));
}
