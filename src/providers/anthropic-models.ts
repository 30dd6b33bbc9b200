/**
 * Anthropic's own model names, as Claude Code and the Anthropic SDKs send them, and the Bedrock
 * foundation model each one is. They are called as the cross-region inference profile of
 * BETA_REGION's geography (`us.anthropic.…`), which is how Bedrock serves current Claude models
 * on demand. MODEL_ALIASES and MODEL_ROUTES come before this table.
 */

import type { ListedModel } from "./models.ts";

export interface AnthropicModel {
  /** Bedrock's foundation-model id. */
  bedrock: string;
  display: string;
  /** Release day, Anthropic's `created_at`. */
  released: string;
  /** Undated names (`claude-sonnet-4-5`) point at a dated one and are not listed on their own. */
  aliasOf?: string;
}

const TABLE: [name: string, bedrock: string, display: string, released: string][] = [
  ["claude-opus-4-6", "anthropic.claude-opus-4-6-v1", "Claude Opus 4.6", "2026-02-05"],
  ["claude-sonnet-4-6", "anthropic.claude-sonnet-4-6", "Claude Sonnet 4.6", "2026-02-17"],
  ["claude-opus-4-5-20251101", "anthropic.claude-opus-4-5-20251101-v1:0", "Claude Opus 4.5", "2025-11-24"],
  ["claude-haiku-4-5-20251001", "anthropic.claude-haiku-4-5-20251001-v1:0", "Claude Haiku 4.5", "2025-10-15"],
  ["claude-sonnet-4-5-20250929", "anthropic.claude-sonnet-4-5-20250929-v1:0", "Claude Sonnet 4.5", "2025-09-29"],
  ["claude-opus-4-1-20250805", "anthropic.claude-opus-4-1-20250805-v1:0", "Claude Opus 4.1", "2025-08-05"],
  ["claude-opus-4-20250514", "anthropic.claude-opus-4-20250514-v1:0", "Claude Opus 4", "2025-05-22"],
  ["claude-sonnet-4-20250514", "anthropic.claude-sonnet-4-20250514-v1:0", "Claude Sonnet 4", "2025-05-22"],
  ["claude-3-7-sonnet-20250219", "anthropic.claude-3-7-sonnet-20250219-v1:0", "Claude Sonnet 3.7", "2025-02-24"],
  ["claude-3-5-haiku-20241022", "anthropic.claude-3-5-haiku-20241022-v1:0", "Claude Haiku 3.5", "2024-10-22"],
  ["claude-3-5-sonnet-20241022", "anthropic.claude-3-5-sonnet-20241022-v2:0", "Claude Sonnet 3.5 (New)", "2024-10-22"],
  ["claude-3-haiku-20240307", "anthropic.claude-3-haiku-20240307-v1:0", "Claude Haiku 3", "2024-03-07"],
];

/** Anthropic's undated aliases -> the dated name. */
const ALIASES: [alias: string, name: string][] = [
  ["claude-opus-4-5", "claude-opus-4-5-20251101"],
  ["claude-haiku-4-5", "claude-haiku-4-5-20251001"],
  ["claude-sonnet-4-5", "claude-sonnet-4-5-20250929"],
  ["claude-opus-4-1", "claude-opus-4-1-20250805"],
  ["claude-opus-4-0", "claude-opus-4-20250514"],
  ["claude-sonnet-4-0", "claude-sonnet-4-20250514"],
  ["claude-3-7-sonnet-latest", "claude-3-7-sonnet-20250219"],
  ["claude-3-5-haiku-latest", "claude-3-5-haiku-20241022"],
  ["claude-3-5-sonnet-latest", "claude-3-5-sonnet-20241022"],
];

export const ANTHROPIC_MODELS: ReadonlyMap<string, AnthropicModel> = (() => {
  const models = new Map<string, AnthropicModel>(TABLE.map(([name, bedrock, display, released]) => [name, { bedrock, display, released }]));
  for (const [alias, name] of ALIASES) models.set(alias, { ...models.get(name)!, aliasOf: name });
  return models;
})();

const unix = (day: string) => Math.floor(Date.parse(day) / 1000);

/** Whether an id is one of Anthropic's own names (dated or an undated alias). */
export const isAnthropicName = (id: string): boolean => ANTHROPIC_MODELS.has(id);

/** How Anthropic's model list names a model: its display name, or the id itself for one it does not know. */
export const anthropicDisplayName = (id: string): string => ANTHROPIC_MODELS.get(id)?.display ?? id;

/**
 * Claude's own models as /v1/models lists them, each with the upstream its name routes to, when
 * an upstream that takes Claude's names is ready; none otherwise. `route`: an id's first upstream.
 */
export function claudeListing(route: (id: string) => string | undefined, ready: (upstream: string) => boolean): (ListedModel & { provider: string })[] {
  const first = route("claude-sonnet-4-5");
  if (!first || !ready(first)) return [];
  return [...ANTHROPIC_MODELS].filter(([, m]) => !m.aliasOf).map(([id, m]) => ({ id, owned_by: "anthropic", created: unix(m.released), provider: route(id) ?? first }));
}

/** Claude's models under every id a Bedrock client may call them by: the name, `region`'s inference profile, the foundation model. */
export function claudeBedrockIds(region: string): ListedModel[] {
  return [...ANTHROPIC_MODELS].filter(([, m]) => !m.aliasOf).flatMap(([name, m]) =>
    [name, anthropicProfile(name, region)!, m.bedrock].map((id) => ({ id, owned_by: "anthropic", created: unix(m.released) })));
}

/** The inference-profile prefix of a region's geography; regions outside these use the global profile. */
export function geoPrefix(region: string): string {
  if (region.startsWith("us-gov-")) return "us-gov";
  if (region.startsWith("us-") || region.startsWith("ca-")) return "us";
  if (region.startsWith("eu-")) return "eu";
  if (region.startsWith("ap-")) return "apac";
  return "global";
}

/**
 * `claude-sonnet-4-5` -> `us.anthropic.claude-sonnet-4-5-20250929-v1:0` in us-east-1. A `claude-*`
 * name the table does not know yet (Claude Code moves to new models before this table does) is sent
 * as `<geo>.anthropic.<name>`, the form Bedrock gives its newest models (`anthropic.claude-sonnet-4-6`);
 * MODEL_ALIASES corrects it where Bedrock names a model otherwise. Other names: undefined.
 */
export function anthropicProfile(name: string, region: string | undefined): string | undefined {
  const geo = geoPrefix(region ?? "us-east-1");
  const model = ANTHROPIC_MODELS.get(name);
  if (model) return `${geo}.${model.bedrock}`;
  return /^claude-[a-z0-9][a-z0-9.-]*$/.test(name) ? `${geo}.anthropic.${name}` : undefined;
}

/** The geographies of Bedrock's cross-region inference profiles, as their ids begin (`us.`, `apac.`, …). */
export const GEOS = "us|eu|apac|global|us-gov|jp|au|ca";
const GEO_PREFIX = new RegExp(`^(${GEOS})\\.`);

/** A profile id without its geography (`us.meta.x` -> `meta.x`); other ids as they are. */
export const unprefixed = (id: string) => id.replace(GEO_PREFIX, "");

/** The foundation-model id inside a Claude profile id (`us.anthropic.x` -> `anthropic.x`); other ids as they are. */
export const foundationModel = (id: string) => (GEO_PREFIX.test(id) && unprefixed(id).startsWith("anthropic.") ? unprefixed(id) : id);
