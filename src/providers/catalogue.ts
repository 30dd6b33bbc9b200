import type { KindName } from "./kind.ts";

/** Well-known models; any id that routes can still be used. Dates are the vendors' release days. */
const KNOWN: [KindName, string, string, string][] = [
  ["openai", "gpt-4o", "openai", "2024-05-13"],
  ["openai", "gpt-4o-mini", "openai", "2024-07-18"],
  ["openai", "gpt-4.1", "openai", "2025-04-14"],
  ["openai", "gpt-4.1-mini", "openai", "2025-04-14"],
  ["openai", "o3-mini", "openai", "2025-01-31"],
  ["openai", "o4-mini", "openai", "2025-04-16"],
  ["bedrock", "anthropic.claude-3-5-sonnet-20241022-v2:0", "anthropic", "2024-10-22"],
  ["bedrock", "anthropic.claude-3-5-haiku-20241022-v1:0", "anthropic", "2024-10-22"],
  ["bedrock", "anthropic.claude-3-7-sonnet-20250219-v1:0", "anthropic", "2025-02-19"],
  ["bedrock", "us.anthropic.claude-sonnet-4-20250514-v1:0", "anthropic", "2025-05-14"],
  ["bedrock", "amazon.titan-text-express-v1", "amazon", "2023-11-29"],
  ["bedrock", "amazon.titan-text-lite-v1", "amazon", "2023-11-29"],
  ["bedrock", "amazon.nova-pro-v1:0", "amazon", "2024-12-03"],
  ["bedrock", "amazon.nova-lite-v1:0", "amazon", "2024-12-03"],
  ["bedrock", "meta.llama3-1-70b-instruct-v1:0", "meta", "2024-07-23"],
  ["bedrock", "mistral.mistral-large-2407-v1:0", "mistral", "2024-07-24"],
  ["bedrock", "cohere.command-r-plus-v1:0", "cohere", "2024-04-29"],
  ["mock", "mock", "parley", "2026-11-22"],
  ["mock", "mock/tools", "parley", "2026-11-22"],
  ["mock", "mock/slow", "parley", "2026-11-22"],
  ["mock", "mock/error-429", "parley", "2026-11-22"],
  ["mock", "mock/error-503", "parley", "2026-11-22"],
];

const unix = (day: string) => Math.floor(Date.parse(day) / 1000);

/** The built-in list of a kind's models: what /v1/models shows for the spec's upstreams when discovery has nothing. */
export function catalogue(provider: KindName): { id: string; owned_by: string; created: number }[] {
  return KNOWN.filter(([p]) => p === provider).map(([, id, owned_by, day]) => ({ id, owned_by, created: unix(day) }));
}
