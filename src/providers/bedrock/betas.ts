import { ANTHROPIC_MODELS, foundationModel } from "../anthropic-models.ts";
import TABLE from "./betas.json" with { type: "json" };

/**
 * The `anthropic-beta` values Bedrock accepts, by model, from the table in betas.json (data: a new
 * beta is a line there). Bedrock refuses a request naming one it does not know, and Claude Code
 * sends several that only api.anthropic.com knows (`claude-code-20250219`, `oauth-2025-04-20`, …).
 * An upstream's `anthropic_betas` (BETA_ANTHROPIC_BETAS) replaces the table.
 */
const BY_MODEL: [RegExp, string[]][] = TABLE.models.map(({ pattern, betas }) => [new RegExp(pattern), betas]);

/** Betas of api.anthropic.com's own features (its login, its file store, Claude Code's identity). */
const FIRST_PARTY_ONLY = new RegExp(TABLE.firstPartyOnly);

/** Every model of the table, by Bedrock id: a Claude id outside it is newer than the table. */
const KNOWN = new Set([...ANTHROPIC_MODELS.values()].map((m) => m.bedrock));

/**
 * The header's betas that Bedrock takes for `modelId`, in the client's order; each one left out is
 * given to `dropped`. A Claude model newer than the table gets every beta but api.anthropic.com's
 * own: the client, which knows the model, chose them.
 */
export function bedrockBetas(modelId: string, header: string | null | undefined, override?: string[], dropped?: (beta: string) => void): string[] {
  if (!header) return [];
  const betas = [...new Set(header.split(",").map((b) => b.trim()).filter(Boolean))];
  const kept = betas.filter(takes(modelId, override));
  if (dropped && kept.length < betas.length) for (const beta of betas) if (!kept.includes(beta)) dropped(beta);
  return kept;
}

function takes(modelId: string, override: string[] | undefined): (beta: string) => boolean {
  if (override) return (b) => override.includes(b);
  const foundation = foundationModel(modelId);
  if (/^anthropic\.claude-/.test(foundation) && !KNOWN.has(foundation)) return (b) => !FIRST_PARTY_ONLY.test(b);
  const allowed = new Set(BY_MODEL.flatMap(([pattern, list]) => (pattern.test(modelId) ? list : [])));
  return (b) => allowed.has(b);
}
